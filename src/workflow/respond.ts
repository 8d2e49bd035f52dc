import { threadSeal } from "../github/state-marker.js";
import { findThreadState } from "../github/plan-comment.js";
import { atLeast } from "../github/permission.js";
import { repoMinimumRefusal } from "./approval/index.js";
import { loadRepoConfig } from "./thread-context.js";
import type { JobContext, WorkflowDeps } from "./deps.js";
import { planThread } from "./plan/index.js";
import { buildThread } from "./build/index.js";

export interface PlainComment {
  commentId: number;
  body: string;
}

/**
 * A comment that is not a command: the answer to a waiting question, or (when the repository
 * allows it) feedback on a pending plan. Anything else is not addressed to Blueprint.
 */
export async function respondToComment(deps: WorkflowDeps, job: JobContext, comment: PlainComment): Promise<void> {
  const { port } = job;
  // 1. Is Blueprint waiting for something on this thread?
  const lookup = findThreadState(await port.comments(), threadSeal(deps.stateKey, port));
  if (lookup.kind !== "found") return;
  const { latest, plan } = lookup;
  const waiting = latest.state.status === "awaiting_answer";
  const pending = !waiting && plan !== null && plan.comment.id === latest.comment.id && plan.state.status === "pending";
  if (!waiting && !pending) return;

  // 2. Only people who may command Blueprint can answer or give feedback.
  if (!atLeast(await port.permission(job.actor), deps.minPermission)) return;

  const resumesBuild = waiting && latest.state.questionMode === "build";
  // 3. A plain comment counts as feedback only if the repository says so (default: it does); an answer
  //    that resumes a build needs what `/build` needs, the repository's own minimum included.
  if (pending || resumesBuild) {
    const mirror = await deps.repoCache.sync({
      cloneUrl: port.repo.cloneUrl,
      ref: `refs/heads/${port.repo.defaultBranch}`,
      token: () => port.gitToken(),
    });
    const config = await loadRepoConfig((ref, file) => mirror.readFile(ref, file), port.repo.defaultBranch);
    if (!config.ok || (pending && config.config.feedback === "command-only")) return;
    const refusal = resumesBuild ? await repoMinimumRefusal(port, job.actor, config.config) : null;
    if (refusal) {
      await port.postComment(`${refusal} Your comment was not taken as the answer to the build's question.`);
      return;
    }
  }
  await port
    .reactToComment(comment.commentId, "eyes")
    .catch((error) => deps.log.warn({ err: error }, "could not react"));

  // 4. Resume the run that asked, in its own mode; or revise the plan.
  if (resumesBuild) {
    const approval = {
      approver: latest.state.approvedBy ?? job.actor,
      revision: null,
      steps: [],
      // Not forced: the build runs on the approval it was given, and stops if the plan went stale since.
      force: false,
      permitted: true,
      minimumPermission: deps.minPermission,
    };
    await buildThread(deps, job, { approval, fresh: false, answer: { answer: comment.body, author: job.actor } });
    return;
  }
  await planThread(deps, job, {
    trigger: waiting
      ? { kind: "answer", answer: { answer: comment.body, author: job.actor } }
      : { kind: "feedback", feedback: { author: job.actor, source: "comment", text: comment.body } },
    commandCommentId: comment.commentId,
  });
}
