import { commentSeal, threadSeal } from "../github/state-marker.js";
import { findThreadState, renderPlanComment, renderStatusComment } from "../github/plan-comment.js";
import type { JobContext, WorkflowDeps } from "./deps.js";
import { ThreadLabels } from "./labels.js";
import type { ThreadPort } from "./ports.js";
import type { ThreadState } from "./state.js";
import { loadRepoConfig } from "./thread-context.js";

/**
 * `/cancel` with nothing running: withdraw a waiting question, or say there is nothing to stop.
 * Returns the state saved, or null when nothing was waiting.
 */
export async function cancelWaiting(deps: WorkflowDeps, job: JobContext): Promise<ThreadState | null> {
  const { port } = job;
  const lookup = findThreadState(await port.comments(), threadSeal(deps.stateKey, port));
  if (lookup.kind !== "found" || lookup.latest.state.status !== "awaiting_answer") {
    await port.postComment("Nothing is running or waiting on this thread.");
    return null;
  }
  const { comment, state } = lookup.latest;
  const seal = commentSeal(threadSeal(deps.stateKey, port), comment.id);
  const question = state.question ?? "";
  const stopped = { ...state, question: null, questionMode: null, questionStep: null, status: "cancelled" as const, updatedAt: new Date().toISOString() };
  if (state.plan) {
    // A build that stopped to ask: back to a resumable build.
    await port.updateComment(comment.id, deps.redact(renderPlanComment(stopped, seal)));
  } else {
    await port.updateComment(comment.id, deps.redact(renderStatusComment(stopped, seal, "## ⏹️ Question withdrawn", `Blueprint had asked:\n\n> ${question.replace(/\n/g, "\n> ")}\n\n@${job.actor} withdrew it with \`/cancel\`. Comment \`/plan\` to start again.`)));
  }
  await port.postComment(`Withdrew Blueprint's question. ${state.plan ? "Comment `/build` to resume the build." : "Comment `/plan` to start again."}`);
  return stopped;
}

/** Whether the thread waits on a question its build asked: the thread then carries the building label. */
export async function buildQuestionWaiting(deps: Pick<WorkflowDeps, "stateKey">, port: ThreadPort): Promise<boolean> {
  const lookup = findThreadState(await port.comments(), threadSeal(deps.stateKey, port));
  return lookup.kind === "found" && lookup.latest.state.status === "awaiting_answer" && lookup.latest.state.questionMode === "build";
}

/**
 * `/cancel` of a build's question, as lane work: the question is withdrawn, and the thread's label
 * goes from building back to planned. The label's name comes from the repository's settings, hence a
 * synced mirror (triage syncs none). A label that cannot be moved is logged, never a failed `/cancel`.
 */
export async function withdrawBuildQuestion(deps: WorkflowDeps, job: JobContext): Promise<void> {
  const stopped = await cancelWaiting(deps, job);
  if (!stopped) return;
  const { port } = job;
  try {
    const mirror = await deps.repoCache.sync({ cloneUrl: port.repo.cloneUrl, ref: `refs/heads/${port.repo.defaultBranch}`, token: () => port.gitToken() });
    const configRead = await loadRepoConfig((ref, file) => mirror.readFile(ref, file), port.repo.defaultBranch);
    // A broken configuration: none of its settings count, the label stays as it is.
    if (configRead.ok) await new ThreadLabels(port, configRead.config, deps.log, job.deliveryId).follow(stopped);
  } catch (error) {
    deps.log.warn({ err: error, deliveryId: job.deliveryId }, "could not read the repository's label settings after withdrawing a build's question");
  }
}
