import { commandJob } from "../jobs/from-webhook.js";
import { OWN_TOKEN_INSTALLATION_ID, runOneJob, type OneJobResult } from "../jobs/one-job.js";
import type { WorkflowDeps } from "../workflow/deps.js";
import type { LocalThread } from "./local-port.js";

/**
 * One CLI command as one comment on the local thread, made into the job the App would make of that
 * comment and run the way the App's workers run it: the same parsing, the same use cases, the same
 * state. Returns when the job is done.
 */
export async function runComment(
  engine: WorkflowDeps,
  thread: LocalThread,
  comment: { body: string; actor: string },
  onInterrupt: (stop: () => void) => void,
): Promise<OneJobResult> {
  // 1. The command is a comment by the person at the terminal, kept in the thread as on GitHub.
  const commentId = await thread.addUserComment(comment.body, comment.actor);
  // 2. Its job. The local port answers "admin" for the person at the terminal, so the permission gate lets it through.
  const { repo, number } = thread.port;
  const job = commandJob(
    {
      deliveryId: `cli-${process.pid}-${commentId}`,
      installationId: OWN_TOKEN_INSTALLATION_ID,
      repository: repo,
      number,
      actor: comment.actor,
      receivedAt: Date.now(),
      commentId,
    },
    comment.body,
  );
  // 3. Triage and work here; Ctrl-C stops the job at its next safe point.
  return runOneJob(engine, thread.port, job, (stop) =>
    onInterrupt(() => stop("interrupted with Ctrl-C; run the command again to resume")),
  );
}
