import { commentSeal, threadSeal } from "../github/state-marker.js";
import {
  findThreadState,
  renderPlanComment,
  renderStatusComment,
  type ThreadStateRecord,
} from "../github/plan-comment.js";
import type { JobContext, WorkflowDeps } from "./deps.js";
import { redactRendered } from "./safe-port.js";
import { ThreadLabels } from "./surfaces/index.js";
import type { ThreadPort } from "./ports.js";
import type { ThreadState } from "./state.js";
import { loadRepoConfig } from "./thread-context.js";

/** The thread's waiting question (its state comment), or null when nothing waits for an answer. */
export async function waitingQuestion(
  deps: Pick<WorkflowDeps, "stateKey">,
  port: ThreadPort,
): Promise<ThreadStateRecord | null> {
  const lookup = findThreadState(await port.comments(), threadSeal(deps.stateKey, port));
  return lookup.kind === "found" && lookup.latest.state.status === "awaiting_answer" ? lookup.latest : null;
}

/**
 * `/cancel` with nothing running: withdraw a waiting question (read now unless `waiting` is given),
 * or say there is nothing to stop. Returns the state saved, or null when nothing was waiting.
 */
export async function cancelWaiting(
  deps: WorkflowDeps,
  job: JobContext,
  waiting?: ThreadStateRecord | null,
): Promise<ThreadState | null> {
  const { port } = job;
  const latest = waiting === undefined ? await waitingQuestion(deps, port) : waiting;
  if (!latest) {
    await port.postComment("Nothing is running or waiting on this thread.");
    return null;
  }
  const { comment, state } = latest;
  const seal = commentSeal(threadSeal(deps.stateKey, port), comment.id);
  const question = state.question ?? "";
  const stopped = {
    ...state,
    question: null,
    questionMode: null,
    questionStep: null,
    status: "cancelled" as const,
    updatedAt: new Date().toISOString(),
  };
  if (state.plan) {
    // A build that stopped to ask: back to a resumable build.
    await port.updateComment(comment.id, redactRendered(deps.redact, renderPlanComment(stopped, seal)));
  } else {
    await port.updateComment(
      comment.id,
      redactRendered(
        deps.redact,
        renderStatusComment(
          stopped,
          seal,
          "## ⏹️ Question withdrawn",
          `Blueprint had asked:\n\n> ${question.replace(/\n/g, "\n> ")}\n\n@${job.actor} withdrew it with \`/cancel\`. Comment \`/plan\` to start again.`,
        ),
      ),
    );
  }
  await port.postComment(
    `Withdrew Blueprint's question. ${state.plan ? "Comment `/build` to resume the build." : "Comment `/plan` to start again."}`,
  );
  return stopped;
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
    const mirror = await deps.repoCache.sync({
      cloneUrl: port.repo.cloneUrl,
      ref: `refs/heads/${port.repo.defaultBranch}`,
      token: () => port.gitToken(),
    });
    const configRead = await loadRepoConfig((ref, file) => mirror.readFile(ref, file), port.repo.defaultBranch);
    // A broken configuration: none of its settings count, the label stays as it is.
    if (configRead.ok) await new ThreadLabels(port, configRead.config, deps.log, job.deliveryId).follow(stopped);
  } catch (error) {
    deps.log.warn(
      { err: error, deliveryId: job.deliveryId },
      "could not read the repository's label settings after withdrawing a build's question",
    );
  }
}

/** `/cancel`: the running job stopped at its next safe point and what is queued behind it dropped, or a question withdrawn. */
export async function answerCancel(
  deps: WorkflowDeps,
  ports: { reply: ThreadPort; work: ThreadPort },
  lanes: { stop(): Promise<{ running: string | null; dropped: number }>; enqueue(): Promise<void> },
  job: { actor: string; deliveryId: string },
): Promise<void> {
  const stopped = await lanes.stop();
  const dropped =
    stopped.dropped > 0
      ? ` The ${stopped.dropped === 1 ? "command" : `${stopped.dropped} commands`} queued behind it will not run; comment again if you still want ${stopped.dropped === 1 ? "it" : "them"}.`
      : "";
  if (stopped.running) {
    // On the quick answers' budget: the job's own budget is the stopped job's, paced behind its
    // writes — across replicas, behind a replica that is stuck, the very case /cancel is for.
    await ports.reply.postComment(
      `Stopping ${stopped.running} at the next safe point. Everything already pushed stays.${dropped}`,
    );
    return;
  }
  // A build's question: withdrawing it moves the thread's label too, which needs the repository's
  // settings (a synced mirror), so it is lane work. Any other question is withdrawn now.
  const waiting = await waitingQuestion(deps, ports.work);
  if (waiting?.state.questionMode === "build") await lanes.enqueue();
  else
    await cancelWaiting(
      deps,
      { port: ports.work, actor: job.actor, signal: new AbortController().signal, deliveryId: job.deliveryId },
      waiting,
    );
}
