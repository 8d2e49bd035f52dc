import { readRunOutcome, recordErrors, recordWrites, type RunOutcome } from "../github/run-outcome.js";
import { RecentKeys } from "../jobs/dedupe.js";
import { JobQueue } from "../jobs/queue.js";
import type { WorkflowDeps } from "../workflow/deps.js";
import { Intake } from "../workflow/intake.js";
import type { LocalThread } from "./local-port.js";

export interface SessionResult {
  outcome: RunOutcome;
  /** Errors the engine logged during the job. */
  jobErrors: string[];
}

/**
 * One CLI command as one comment on the local thread, through the App's intake: the same parsing,
 * the same use cases, the same state. Returns when the job it started is done.
 */
export async function runComment(
  engine: WorkflowDeps,
  thread: LocalThread,
  comment: { body: string; actor: string },
  onInterrupt: (stop: () => void) => void,
): Promise<SessionResult> {
  // 1. The port records what this run writes, so the outcome is about this run.
  const { port, writes } = recordWrites(thread.port);
  const logged = recordErrors(engine.log);
  const deps: WorkflowDeps = { ...engine, log: logged.log };
  const queue = new JobQueue((error, job) => deps.log.error({ err: error, job: job.label }, "job failed"));
  onInterrupt(() => queue.abortAll("interrupted with Ctrl-C; run the command again to resume"));

  // 2. The command is a comment by the person at the terminal.
  const commentId = await thread.addUserComment(comment.body, comment.actor);
  const intake = new Intake(deps, queue, new RecentKeys());
  await intake.onComment(port, { deliveryId: `cli-${process.pid}-${commentId}`, commentId, actor: comment.actor, actorIsBot: false, body: comment.body });

  // 3. Wait for the job, then read where the thread stands.
  await queue.idle();
  return { outcome: await readRunOutcome(port, writes, deps.stateKey), jobErrors: logged.errors };
}
