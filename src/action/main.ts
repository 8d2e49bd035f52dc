import { createOctokitPort, type PortOctokit } from "../github/octokit-port.js";
import { MARKER_PREFIX } from "../github/state-marker.js";
import { readRunOutcome, recordErrors, recordWrites, type RunOutcome } from "../github/run-outcome.js";
import { RecentKeys } from "../jobs/dedupe.js";
import { JobQueue } from "../jobs/queue.js";
import type { WorkflowDeps } from "../workflow/deps.js";
import { Intake } from "../workflow/intake.js";
import type { ActionEvent } from "./event.js";

export interface ActionJob {
  deps: WorkflowDeps;
  octokit: PortOctokit;
  event: Exclude<ActionEvent, { kind: "ignored" }>;
  /** The account the token acts as; only its comments with a state marker count as Blueprint's. */
  botLogin: string;
}

export interface ActionJobResult {
  outcome: RunOutcome;
  /** Errors the engine logged during the job (they fail the run). */
  jobErrors: string[];
}

/** One event, handled the way the App handles a webhook, but inline: the step ends when the job does. */
export async function runActionJob(job: ActionJob): Promise<ActionJobResult> {
  const { event } = job;
  const logged = recordErrors(job.deps.log);
  const deps: WorkflowDeps = { ...job.deps, log: logged.log };
  // 1. The thread, through the same port the App uses.
  const thread = createOctokitPort({
    octokit: job.octokit,
    repo: event.repo,
    number: event.number,
    isOwnComment: (comment) => comment.user?.login === job.botLogin && comment.body.includes(MARKER_PREFIX),
  });
  const { port, writes } = recordWrites(thread);

  // 2. The App's intake on a queue of our own.
  const queue = new JobQueue((error, queued) => deps.log.error({ err: error, job: queued.label }, "job failed"));
  const intake = new Intake(deps, queue, new RecentKeys());

  // 3. Hand the event over and wait for the job it started, if any.
  if (event.kind === "comment") await intake.onComment(port, event.intent);
  else await intake.onReview(port, event.intent);
  await queue.idle();

  // 4. Where the thread stands now, and whether this run put it there.
  return { outcome: await readRunOutcome(port, writes, deps.stateKey), jobErrors: logged.errors };
}
