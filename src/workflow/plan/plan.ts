import { findThreadState, type ThreadStateRecord } from "../../github/plan-comment.js";
import { threadSeal, type ThreadSeal } from "../../github/state-marker.js";
import { prefetchRepoMap } from "../../tools/repo-map/build-map.js";
import type { Workspace } from "../../workspace/workspace.js";
import { postPlanCheck } from "../surfaces/index.js";
import { costCapFor, pricingFor, renderPlanCost } from "../cost.js";
import type { JobContext, WorkflowDeps } from "../deps.js";
import { redactRendered } from "../safe-port.js";
import { handedOver } from "../../shared/hand-over.js";
import { ThreadLabels } from "../surfaces/index.js";
import { withExplored } from "../memory.js";
import { plainError } from "../plain-error.js";
import { explore, type Explored } from "./explore.js";
import { failedComment, resultComment, warnAboutWorkflows } from "./result.js";
import { withPickedModel, pickAdvice } from "../model-choice.js";
import { initialState, planStanding, type PlanStanding, type PlanTrigger } from "./start.js";
import { openPlanStatus, type PlanStatus } from "./status.js";
import type { ThreadInfo } from "../ports.js";
import { readRepoInstructions } from "../repo-instructions.js";
import type { Plan } from "../../plan/schema.js";
import { repoMinimumRefusal } from "../approval/index.js";
import type { ThreadState } from "../state.js";
import { supersede } from "./supersede.js";
import { loadRepoConfig } from "../thread-context.js";
import type { RepoConfig } from "../../config/repo-config.js";

export type { PlanTrigger } from "./start.js";

/**
 * A planning run handed to another worker (this one is shutting down) starts over there in a new
 * status comment: this one keeps no state marker, so the thread's state is as it was before the run.
 */
const HANDED_OVER =
  "⏸ Blueprint restarted while planning: another worker starts this plan over and posts it below. Nothing was changed.";

export interface PlanRequest {
  trigger: PlanTrigger;
  /** The comment that gave the command: excluded from the conversation the model sees. */
  commandCommentId?: number | undefined;
}

/** `/plan`, revisions and answers: explore read-only, then turn one status comment into a plan revision. */
export async function planThread(deps: WorkflowDeps, job: JobContext, request: PlanRequest): Promise<void> {
  const { port } = job;
  // 1. Where we stand: the current plan and the thread's memory.
  const comments = await port.comments();
  const seal = threadSeal(deps.stateKey, port);
  const lookup = findThreadState(comments, seal);
  const standing = planStanding(lookup, request.trigger, job);
  const { current, resumed, memory } = standing;
  if (await notToPlan(deps, job, request, { lookup, standing })) return;

  // 2. The thread and the state this run writes.
  const info = await port.info();
  const state = initialState(info, port.repo.defaultBranch, memory, standing.revision, job.deliveryId);
  state.model = pickedModel(request.trigger, standing);

  // 3. One status comment, kept up to date (workflow/plan/status.ts).
  const status = await openPlanStatus(deps, job, { comments, seal, state, reuse: resumed ?? standing.takenOver });
  // Handed to another worker (see HANDED_OVER): a reused question comment gets its question back, so the answer resumes
  // it there.
  const handedOverBody = resumed ? resumed.comment.body : HANDED_OVER;

  let workspace: Workspace | null = null;
  let stopPrefetch: (() => Promise<void>) | undefined;
  let config: RepoConfig | null = null;
  try {
    // 4. A workspace at the right commit; configuration from the default branch.
    const tree = await planningTree(deps, job, info);
    workspace = tree;
    await recordBaseAndHead(tree, info, state);
    config = await planningConfig(deps, job, { status, state }, (at, file) => tree.readAtRef(at, file));
    if (!config) return;
    // The model is told to call repo_map first: its tags are collected while the thread is read and the model answers.
    stopPrefetch = prefetchRepoMap(tree.dir, tree.tagCacheDir, job.signal);

    // 5. What the model is told, and the read-only run.
    const explored = await explore(deps, job, {
      tree,
      config,
      info,
      comments,
      memory,
      current,
      commandCommentId: request.commandCommentId,
      status,
    });
    if (handedOver(job.signal)) return await status.tracking.final(handedOverBody);
    Object.assign(state, withExplored(memory, explored.filesRead));
    if (explored.outcome.kind === "plan_submitted")
      state.instructionFiles = await instructionFilesFor(tree, job.port.repo.defaultBranch, explored.outcome.plan);
    deps.telemetry?.modelUsage("plan", explored.outcome.usage);

    // 6. Plan mode must leave the tree as it found it.
    if (await changedTheTree(deps, job, status, state, tree))
      return await new ThreadLabels(job.port, config, deps.log, job.deliveryId).show("failed");

    // 7. The result replaces the status comment; a new revision supersedes the old one.
    await postResult(deps, job, { status, state, config, current, explored, seal });
  } catch (error) {
    if (handedOver(job.signal)) return await status.tracking.final(handedOverBody);
    deps.log.error({ err: error, deliveryId: job.deliveryId }, "planning failed");
    await status.tracking.final(
      failedComment(
        state,
        status.sealed,
        plainError(error),
        "Comment `/plan` to try again; if it keeps failing, tell the app's operators.",
      ),
    );
    // Labelled as the repository names its labels; before its configuration was read, that is not known.
    if (config) await new ThreadLabels(job.port, config, deps.log, job.deliveryId).show("failed");
  } finally {
    // Nothing may read the tree once it is removed.
    await stopPrefetch?.();
    await workspace?.dispose().catch((error) => deps.log.warn({ err: error }, "could not remove a workspace"));
  }
}

/**
 * Runs that end before they start: a planning job put back in a shared queue after it ran (its delivery already wrote
 * a finished state here: the thread's sealed state, which nothing in Redis can undo, says so), and feedback with no
 * plan to revise (only `/revise` is then addressed to us, and is told so).
 */
async function notToPlan(
  deps: WorkflowDeps,
  job: JobContext,
  request: PlanRequest,
  { lookup, standing }: { lookup: ReturnType<typeof findThreadState>; standing: ReturnType<typeof planStanding> },
): Promise<boolean> {
  if (!standing.takenOver && lookup.kind === "found" && lookup.all.some((r) => r.state.deliveryId === job.deliveryId)) {
    deps.log.error(
      { deliveryId: job.deliveryId },
      "refused a planning job whose delivery already planned on this thread: it does not run again",
    );
    return true;
  }
  if (request.trigger.kind === "feedback" && !standing.current?.state.plan) {
    if (request.trigger.feedback.source === "revise")
      await job.port.postComment("There is no plan to revise yet. Comment `/plan` first.");
    return true;
  }
  return false;
}

/** The AGENTS.md files the plan's build will follow (named in the plan comment). */
async function instructionFilesFor(tree: Workspace, defaultBranch: string, plan: Plan): Promise<string[]> {
  const ref = `refs/heads/${defaultBranch}`;
  const read = await readRepoInstructions(
    (file) => tree.readAtRef(ref, file),
    plan.steps.flatMap((step) => step.files),
    (files) => tree.filesAtRef(ref, files),
  );
  return [...read.files.map((file) => file.path), ...read.omitted];
}

/** A workspace at the thread's commit: a pull request's head, else the default branch. */
function planningTree(deps: WorkflowDeps, job: JobContext, info: ThreadInfo): Promise<Workspace> {
  const { port } = job;
  const ref = info.pullRequest ? `refs/pull/${info.number}/head` : `refs/heads/${port.repo.defaultBranch}`;
  return deps.repoCache.prepare({ cloneUrl: port.repo.cloneUrl, ref, token: () => port.gitToken() });
}

/** The plan is made on this base (and, on a pull request, this head). */
async function recordBaseAndHead(tree: Workspace, info: ThreadInfo, state: ThreadState): Promise<void> {
  state.base.sha = info.pullRequest
    ? ((await tree.revParse(`refs/heads/${info.pullRequest.baseRef}`)) ?? "")
    : tree.baseSha;
  if (state.head) state.head.sha = state.planHead = tree.baseSha;
}

/** A new `/plan` says its model (or none: the configured one); revisions and answers keep the plan's. */
function pickedModel(trigger: PlanTrigger, standing: PlanStanding): string | null {
  if (trigger.kind === "plan") return trigger.model ?? null;
  return (standing.takenOver ?? standing.resumed ?? standing.current)?.state.model ?? null;
}

/**
 * The configuration from the default branch, if it reads, the requester may plan under it and it allows
 * the model picked (with that model); else the run ends in the status comment.
 */
async function planningConfig(
  deps: WorkflowDeps,
  job: JobContext,
  run: { status: PlanStatus; state: ThreadState },
  readAtRef: (ref: string, file: string) => Promise<string | null>,
): Promise<RepoConfig | null> {
  const { status, state } = run;
  const configRead = await loadRepoConfig(readAtRef, job.port.repo.defaultBranch);
  if (!configRead.ok) {
    await status.tracking.final(
      failedComment(
        state,
        status.sealed,
        configRead.message,
        "Fix the file on the default branch, then comment `/plan` again.",
      ),
    );
    return null;
  }
  const refusal = await repoMinimumRefusal(job.port, job.actor, configRead.config);
  if (refusal) {
    await status.tracking.final(
      failedComment(state, status.sealed, refusal, "Ask someone with that access to comment `/plan`."),
    );
    return null;
  }
  const choice = withPickedModel(deps, configRead.config, state.model);
  if (!choice.ok) {
    await status.tracking.final(
      failedComment({ ...state, model: null }, status.sealed, choice.message, pickAdvice(deps, configRead.config)),
    );
    return null;
  }
  return choice.config;
}

/** True (and the plan discarded) when the read-only run changed the working tree. */
async function changedTheTree(
  deps: WorkflowDeps,
  job: JobContext,
  status: PlanStatus,
  state: ThreadState,
  tree: Workspace,
): Promise<boolean> {
  const changed = await tree.changes();
  if (changed.length === 0) return false;
  deps.log.error({ deliveryId: job.deliveryId, changed }, "plan mode changed the working tree");
  await status.tracking.final(
    failedComment(
      state,
      status.sealed,
      `planning changed files in the working tree (${changed.slice(0, 5).join(", ")}), which plan mode must never do. The plan was discarded.`,
      "Comment `/plan` to try again.",
    ),
  );
  return true;
}

async function postResult(
  deps: WorkflowDeps,
  job: JobContext,
  input: {
    status: PlanStatus;
    state: ThreadState;
    config: RepoConfig;
    current: ThreadStateRecord | null;
    explored: Explored;
    seal: ThreadSeal;
  },
): Promise<void> {
  const { status, state, config, current, explored } = input;
  const { outcome, model } = explored;
  const result =
    outcome.kind === "plan_submitted" && !explored.workflowsAllowed
      ? { ...outcome, plan: warnAboutWorkflows(outcome.plan) }
      : outcome;
  const cost = { pricing: pricingFor(deps, config, model.model), cap: costCapFor(deps, config, model.model) };
  await status.tracking.final(redactRendered(deps.redact, resultComment(state, status.sealed, result, current, cost)));
  // A question leaves the thread's label as it was: the plan is not made yet.
  if (outcome.kind !== "question")
    await new ThreadLabels(job.port, config, deps.log, job.deliveryId).show(
      outcome.kind === "plan_submitted" ? "planned" : "failed",
    );
  if (outcome.kind === "plan_submitted" && current && current.comment.id !== status.id) {
    await supersede(job.port, input.seal, current, state.revision, deps.redact).catch((error) =>
      deps.log.warn({ err: error }, "could not mark the previous plan superseded"),
    );
  }
  if (result.kind === "plan_submitted") {
    const estimate = renderPlanCost(result.plan, outcome.usage, cost.pricing, cost.cap);
    await postPlanCheck(deps, job.port, {
      plan: result.plan,
      state,
      config,
      estimate,
      previous: current?.state ?? null,
    });
  }
}
