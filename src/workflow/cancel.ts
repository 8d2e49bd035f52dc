import { commentSeal, threadSeal } from "../github/state-marker.js";
import { findThreadState, renderPlanComment, renderStatusComment } from "../github/plan-comment.js";
import type { JobContext, WorkflowDeps } from "./deps.js";

/** `/cancel` with nothing running: withdraw a waiting question, or say there is nothing to stop. */
export async function cancelWaiting(deps: WorkflowDeps, job: JobContext): Promise<void> {
  const { port } = job;
  const lookup = findThreadState(await port.comments(), threadSeal(deps.stateKey, port));
  if (lookup.kind !== "found" || lookup.latest.state.status !== "awaiting_answer") {
    await port.postComment("Nothing is running or waiting on this thread.");
    return;
  }
  const { comment, state } = lookup.latest;
  const seal = commentSeal(threadSeal(deps.stateKey, port), comment.id);
  const question = state.question ?? "";
  const cleared = { ...state, question: null, questionMode: null, questionStep: null, updatedAt: new Date().toISOString() };
  if (state.plan) {
    // A build that stopped to ask: back to a resumable build.
    const stopped = { ...cleared, status: "cancelled" as const };
    await port.updateComment(comment.id, deps.redact(renderPlanComment(stopped, seal)));
  } else {
    const stopped = { ...cleared, status: "cancelled" as const };
    await port.updateComment(comment.id, deps.redact(renderStatusComment(stopped, seal, "## ⏹️ Question withdrawn", `Blueprint had asked:\n\n> ${question.replace(/\n/g, "\n> ")}\n\n@${job.actor} withdrew it with \`/cancel\`. Comment \`/plan\` to start again.`)));
  }
  await port.postComment(`Withdrew Blueprint's question. ${state.plan ? "Comment `/build` to resume the build." : "Comment `/plan` to start again."}`);
}
