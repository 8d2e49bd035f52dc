import { z } from "zod";
import { checkSuiteJob } from "../jobs/from-check-suite.js";
import { OWN_TOKEN_INSTALLATION_ID } from "../jobs/one-job.js";
import { repositoryOf } from "../jobs/payload.js";
import { parse, repositorySchema, userSchema, type Asked, type Ignored } from "./payload-schema.js";

/** A failed check suite or workflow run on a pull request's head: `what` failed, in words. */
export type ChecksEvent = { kind: "checks"; what: string; pullRequest: number; headSha: string } & Asked;

/**
 * GitHub Actions' app: it makes every workflow run's check suite (a `workflow_run` payload names no app). Its id is
 * github.com's; the Action tells apps apart by slug.
 */
const ACTIONS_APP = { id: 15368, slug: "github-actions" };

const pullRequests = z.array(z.object({ number: z.number().int(), head: z.object({ sha: z.string() }) }));
const suiteFields = {
  head_sha: z.string(),
  head_branch: z.string().nullable(),
  conclusion: z.string().nullable(),
  pull_requests: pullRequests,
};

const checkSuiteEvent = z.object({
  action: z.string(),
  check_suite: z.object({
    id: z.number().int(),
    ...suiteFields,
    app: z.object({ id: z.number().int(), slug: z.string().optional() }).nullable(),
  }),
  repository: repositorySchema,
  sender: userSchema,
});

const workflowRunEvent = z.object({
  action: z.string(),
  workflow_run: z.object({
    name: z.string().nullish(),
    path: z.string(),
    check_suite_id: z.number().int(),
    ...suiteFields,
  }),
  repository: repositorySchema,
  sender: userSchema,
});

type Payload = Pick<z.output<typeof checkSuiteEvent>, "action" | "repository" | "sender">;
type Suite = z.output<typeof checkSuiteEvent>["check_suite"];

/** `check_suite`: another app's suite (GitHub sends none to workflows for its own Actions' suites). */
export function checkSuiteEventOf(payload: unknown, deliveryId: string): ChecksEvent | Ignored {
  const event = parse(checkSuiteEvent, payload, "check_suite");
  const app = event.check_suite.app?.slug;
  return failedSuite(event, event.check_suite, deliveryId, `check suite${app ? ` of ${app}` : ""}`);
}

/**
 * `workflow_run`: a workflow the Blueprint workflow's `workflows:` names, as the check suite GitHub Actions made for it.
 * `workflowRef` (GITHUB_WORKFLOW_REF) is the workflow running Blueprint: its own runs are no CI to fix.
 */
export function workflowRunEventOf(
  payload: unknown,
  deliveryId: string,
  workflowRef: string | undefined,
): ChecksEvent | Ignored {
  const event = parse(workflowRunEvent, payload, "workflow_run");
  const run = event.workflow_run;
  if (workflowRef && workflowPath(workflowRef) === run.path)
    return { kind: "ignored", reason: `the workflow run is Blueprint's own workflow's (${run.path}).` };
  const suite = { ...run, id: run.check_suite_id, app: ACTIONS_APP };
  return failedSuite(event, suite, deliveryId, `workflow run${run.name ? ` "${run.name}"` : ""}`);
}

/**
 * A completed, failed suite on the head of a pull request, as the App's webhook makes it a job: who may start the
 * follow-up (Blueprint's own pull request, its head, not its own checks, `ci_fix`) the job decides, as for the App.
 */
function failedSuite(event: Payload, suite: Suite, deliveryId: string, what: string): ChecksEvent | Ignored {
  if (event.action !== "completed")
    return {
      kind: "ignored",
      reason: `Blueprint follows completed check suites only (this ${what} was ${event.action}).`,
    };
  if (suite.conclusion !== "failure")
    return {
      kind: "ignored",
      reason: `the ${what} concluded ${suite.conclusion ?? "nothing"}; Blueprint follows failures only.`,
    };
  const accepted = checkSuiteJob(deliveryId, {
    installation: { id: OWN_TOKEN_INSTALLATION_ID },
    repository: event.repository,
    sender: event.sender,
    check_suite: suite,
  });
  if (accepted?.job.kind !== "check-failure")
    return {
      kind: "ignored",
      reason: `the failed ${what} is not on the head commit of a pull request from this repository.`,
    };
  const { job } = accepted;
  return {
    kind: "checks",
    repo: repositoryOf(event.repository),
    number: job.number,
    actor: event.sender.login,
    what,
    pullRequest: job.pullRequest,
    headSha: job.headSha,
    job,
  };
}

/** `octo/repo/.github/workflows/ci.yml@refs/heads/main` → `.github/workflows/ci.yml`. */
function workflowPath(workflowRef: string): string {
  return workflowRef.replace(/@.*$/, "").split("/").slice(2).join("/");
}
