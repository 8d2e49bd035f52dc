import type { RepoConfig } from "../../config/repo-config.js";
import type { ThreadStateRecord } from "../../github/plan-comment.js";
import { commentSeal, threadSeal, type ThreadSeal } from "../../github/state-marker.js";
import type { Plan } from "../../plan/schema.js";
import type { Mirror } from "../../workspace/mirror.js";
import { checkApproval, editedAfterApproval } from "../approval/index.js";
import type { BuildRequest } from "./request.js";
import { buildNoteLines, recordBuildNote } from "./notes.js";
import { sandboxNotes } from "./report.js";
import { planCommentRenderer, type PlanCommentRenderer } from "./status.js";
import { codeOwnersRefusal } from "../approval/index.js";
import { describeApprovals } from "../approval/index.js";
import type { JobContext, WorkflowDeps } from "../deps.js";
import { applyHandEdits } from "./hand-edits.js";
import { memoryOf, withAnswer } from "../memory.js";
import { pickAdvice, withPickedModel } from "../model-choice.js";
import type { ThreadComment, ThreadInfo } from "../ports.js";
import { dropApprovalsBefore, recordApproval } from "../approval/index.js";
import { repoMinimumRefusal } from "../approval/index.js";
import type { ThreadState } from "../state.js";
import { loadRepoConfig } from "../thread-context.js";

// What a build checks before it starts: each function posts its own refusal and answers null (or
// true for "stop") when the build must not go on.

export interface ApprovedPlan {
  comments: ThreadComment[];
  info: ThreadInfo;
  seal: ThreadSeal;
  record: ThreadStateRecord;
}

/** Is the approval valid? (Checked before touching the repository: an invalid one starts nothing.) */
export async function approvedPlan(
  deps: WorkflowDeps,
  job: JobContext,
  request: BuildRequest,
): Promise<ApprovedPlan | null> {
  const { port } = job;
  const [comments, info] = await Promise.all([port.comments(), port.info()]);
  const seal = threadSeal(deps.stateKey, port);
  const check = checkApproval(comments, info, { ...request.approval, resuming: request.answer !== undefined }, seal);
  if (!check.ok) {
    if (!check.silent) await port.postComment(check.reason);
    return null;
  }
  // This delivery's build started here before and has since stopped building: a job put back after it ran (a takeover
  // of a build whose process died finds it still "building", and resumes).
  const { state } = check.record;
  if (state.buildDeliveries.includes(job.deliveryId) && state.status !== "building") {
    deps.log.error(
      { deliveryId: job.deliveryId },
      "refused a build job whose delivery already built on this thread: it does not run again",
    );
    return null;
  }
  return { comments, info, seal, record: check.record };
}

export interface BuildSource {
  mirror: Mirror;
  config: RepoConfig;
}

/** The repository and its configuration (default branch only), and whether the approver may approve under it. */
export async function buildSource(
  deps: WorkflowDeps,
  job: JobContext,
  request: BuildRequest,
  approved: ApprovedPlan,
): Promise<BuildSource | null> {
  const { port } = job;
  const { info } = approved;
  const mirror = await deps.repoCache.sync({
    cloneUrl: port.repo.cloneUrl,
    ref: info.pullRequest ? `refs/pull/${info.number}/head` : `refs/heads/${port.repo.defaultBranch}`,
    token: () => port.gitToken(),
  });
  const configRead = await loadRepoConfig((ref, file) => mirror.readFile(ref, file), port.repo.defaultBranch);
  if (!configRead.ok) {
    await port.postComment(
      `${configRead.message}\n\nFix the file on the default branch, then comment \`/build\` again.`,
    );
    return null;
  }
  const config = configRead.config;
  const refusal = await repoMinimumRefusal(port, request.approval.approver, config);
  if (refusal) {
    await port.postComment(refusal);
    return null;
  }
  const requestedBy = approved.record.state.requestedBy;
  if (config.require_other_approver && request.approval.approver === requestedBy) {
    await port.postComment(
      `This repository requires someone other than the plan's requester (@${requestedBy}) to approve it.`,
    );
    return null;
  }
  // The plan is built with the model it was made with, if the repository still allows it.
  const choice = withPickedModel(deps, config, approved.record.state.model);
  if (!choice.ok) {
    await port.postComment(
      `${choice.message} This plan was made with it, so it is not built. ${pickAdvice(deps, config)}`,
    );
    return null;
  }
  return { mirror, config: choice.config };
}

export interface PlanToBuild {
  planComment: ThreadComment;
  /** The build's own copy of the thread's state, saved into the plan comment as the build goes. */
  state: ThreadState;
  plan: Plan;
  /** The build report's notes. */
  notes: string[];
  /** Steps a person unticked by hand, so that they are built again. */
  unticked: string[];
  render: PlanCommentRenderer;
}

/** A maintainer may have edited the plan comment: build it as it now reads. */
export async function planAsItNowReads(
  deps: WorkflowDeps,
  job: JobContext,
  request: BuildRequest,
  approved: ApprovedPlan,
): Promise<PlanToBuild | null> {
  const { port } = job;
  const planComment = approved.record.comment;
  let state: ThreadState = structuredClone(approved.record.state);
  const notes: string[] = sandboxNotes(deps.runner.isolation);
  const edits = applyHandEdits(planComment.body, state);
  if (edits.kind === "broken") {
    await port.postComment(
      `The plan comment was edited in a way Blueprint cannot build:\n- ${edits.errors.join("\n- ")}\n\nFix the edit (or comment \`/plan\` for a fresh plan), then comment \`/build\` again.`,
    );
    return null;
  }
  const unticked = edits.kind === "edited" ? edits.unticked : [];
  if (edits.kind === "edited") {
    // An approval covers the plan as the approver saw it, not an edit made after it.
    const unseen = editedAfterApproval(approved.comments, planComment, {
      ...request.approval,
      resuming: request.answer !== undefined,
    });
    if (unseen) {
      await port.postComment(unseen);
      return null;
    }
    state = edits.state;
    // Approvals given before the edit did not see it.
    dropApprovalsBefore(state, planComment.updatedAt);
    notes.push(`Built the plan as edited by hand: ${edits.notes.join(" ")}`);
  }
  const plan = state.plan;
  if (!plan) return null;
  return {
    planComment,
    state,
    plan,
    notes,
    unticked,
    render: planCommentRenderer(deps, state, commentSeal(approved.seal, planComment.id)),
  };
}

/**
 * Every valid approval of the revision is recorded, so code owners' approvals add up (an answer
 * resumes on those already given). With `approvers: codeowners`, each owned file the steps list
 * needs an owner's approval (checked on the plan as it now reads; what a step writes is checked
 * before its push). True when the build waits for more owners.
 */
export async function waitingForCodeOwners(
  job: JobContext,
  request: BuildRequest,
  approved: ApprovedPlan,
  source: BuildSource,
  toBuild: PlanToBuild,
): Promise<boolean> {
  const { port } = job;
  const { state, plan } = toBuild;
  if (request.answer === undefined) recordApproval(state, approved.comments, request.approval);
  const readDefaultBranch = (file: string) => source.mirror.readFile(`refs/heads/${port.repo.defaultBranch}`, file);
  const notOwner = await codeOwnersRefusal(port, source.config, {
    approver: request.approval.approver,
    plan,
    state,
    steps: request.approval.steps,
    readDefaultBranch,
  });
  if (!notOwner) return false;
  // Kept in the plan comment's state, the approval adds up with the next owner's.
  await port.updateComment(
    toBuild.planComment.id,
    toBuild.render(
      `> 🔏 **Waiting for more code owners:** approved so far by ${describeApprovals(state.approvals)}; see the reply below for the files that still need an owner's approval.`,
    ),
  );
  await port.postComment(notOwner);
  return true;
}

/** The approval (and the answer it may carry) goes into the state; what the approver wrote goes into the report. */
export function takeApproval(request: BuildRequest, toBuild: PlanToBuild): void {
  const { state } = toBuild;
  if (request.answer && state.status === "awaiting_answer") {
    const memory = memoryOf(state);
    if (memory)
      Object.assign(state, withAnswer(memory, { ...request.answer, question: state.question ?? "(question)" }));
    state.question = null;
    state.questionMode = null;
    state.questionStep = null;
  }
  state.approvedBy = request.approval.approver;
  recordBuildNote(state, request.note);
  toBuild.notes.push(...buildNoteLines(state.buildNotes));
}
