import { createOctokitPort, type PortOctokit } from "../github/octokit-port.js";
import { MARKER_PREFIX } from "../github/state-marker.js";
import { runOneJob, type OneJobResult } from "../jobs/one-job.js";
import { parseCheckRunExternalId } from "../shared/check-run.js";
import type { WorkflowDeps } from "../workflow/deps.js";
import type { ActionEvent } from "./event.js";
import { explainRefusedChecks } from "./permissions.js";

export interface ActionJob {
  deps: WorkflowDeps;
  octokit: PortOctokit;
  event: Exclude<ActionEvent, { kind: "ignored" }>;
  /** The account the token acts as; only its comments with a state marker count as Blueprint's. */
  botLogin: string;
}

export type ActionJobResult = OneJobResult;

/** One event, handled the way the App's workers handle a webhook's job, but inline: the step ends when the job does. */
export async function runActionJob(job: ActionJob): Promise<ActionJobResult> {
  const { event } = job;
  // 1. The thread, through the same port the App uses.
  const port = createOctokitPort({
    octokit: job.octokit,
    repo: event.repo,
    number: event.number,
    isOwnComment: (comment) => comment.user?.login === job.botLogin && comment.body.includes(MARKER_PREFIX),
    // Check runs the token writes are its app's (`github-actions` for GITHUB_TOKEN), with Blueprint's external id: that
    // app makes every workflow job's check run too. A token that may not write checks is told once and skipped.
    isOwnCheckRun: (run) =>
      run.app !== null && ownApp(run.app.slug ?? "", job.botLogin) && parseCheckRunExternalId(run.external_id) !== null,
    // A failed suite is Blueprint's own when the token's app made it, unless that is GitHub Actions', whose suites are
    // the workflows' (Blueprint's own workflow runs are told apart by their file: check-event.ts).
    isOwnCheckApp: (app) => ownApp(app.slug, job.botLogin) && app.slug !== "github-actions",
    // The Action takes no check_run events (event.ts), so its check runs carry no buttons that would do nothing.
    checkButtons: false,
  });
  // 2. The event's job, triaged and worked here; then where the thread stands and whether this run put it there.
  return runOneJob(job.deps, { ...port, checks: explainRefusedChecks(port.checks) }, event.job);
}

/** Whether an app is the one the token acts for (`<slug>[bot]`). */
function ownApp(slug: string, botLogin: string): boolean {
  return `${slug}[bot]` === botLogin;
}
