import { promises as fs } from "node:fs";
import { z } from "zod";
import { commentJob, reviewJob } from "../jobs/from-webhook.js";
import { OWN_TOKEN_INSTALLATION_ID } from "../jobs/one-job.js";
import { repositoryOf } from "../jobs/payload.js";
import { checkSuiteEventOf, workflowRunEventOf, type ChecksEvent } from "./check-event.js";
import { EventError, parse, repositorySchema, userSchema as user, type Asked, type Ignored } from "./payload-schema.js";

export { EventError } from "./payload-schema.js";

/** The events the Action acts on; a workflow's `on:` may name more. */
const EVENTS = ["issue_comment", "pull_request_review", "check_suite", "workflow_run"];

const issueCommentEvent = z.object({
  action: z.string(),
  issue: z.object({ number: z.number().int() }),
  comment: z.object({
    id: z.number().int(),
    body: z.string().nullish(),
    user: user.nullable(),
    created_at: z.string().optional(),
  }),
  repository: repositorySchema,
  sender: user,
});

const reviewEvent = z.object({
  action: z.string(),
  pull_request: z.object({ number: z.number().int() }),
  review: z.object({
    id: z.number().int(),
    state: z.string(),
    body: z.string().nullish(),
    commit_id: z.string(),
    submitted_at: z.string().nullish(),
    user: user.nullable(),
  }),
  repository: repositorySchema,
  sender: user,
});

export type ActionEvent =
  ({ kind: "comment"; body: string } & Asked) | ({ kind: "review"; state: string } & Asked) | ChecksEvent | Ignored;

/**
 * The workflow's triggering event, read from GITHUB_EVENT_PATH and validated; `workflowRef` (GITHUB_WORKFLOW_REF) is
 * the workflow running Blueprint.
 */
export async function readActionEvent(
  eventName: string | undefined,
  eventPath: string | undefined,
  deliveryId: string,
  workflowRef?: string,
): Promise<ActionEvent> {
  if (!eventName || !eventPath)
    throw new EventError(
      "GITHUB_EVENT_NAME and GITHUB_EVENT_PATH are not set; Blueprint's Action only runs inside a GitHub Actions workflow.",
    );
  if (!EVENTS.includes(eventName))
    return { kind: "ignored", reason: `Blueprint acts on ${EVENTS.join(", ")} events, not ${eventName}.` };
  let payload: unknown;
  try {
    payload = JSON.parse(await fs.readFile(eventPath, "utf8"));
  } catch (error) {
    throw new EventError(
      `could not read the event payload at ${eventPath}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  switch (eventName) {
    case "issue_comment":
      return commentEvent(payload, deliveryId);
    case "pull_request_review":
      return reviewEventOf(payload, deliveryId);
    case "check_suite":
      return checkSuiteEventOf(payload, deliveryId);
    default:
      return workflowRunEventOf(payload, deliveryId, workflowRef);
  }
}

function commentEvent(payload: unknown, deliveryId: string): ActionEvent {
  const event = parse(issueCommentEvent, payload, "issue_comment");
  if (event.action !== "created")
    return { kind: "ignored", reason: `Blueprint reads new comments only (this one was ${event.action}).` };
  const author = event.comment.user;
  if (!author) return { kind: "ignored", reason: "the comment has no author (a deleted account)." };
  const body = event.comment.body ?? "";
  // The webhook's own mapping: the event file is the payload GitHub would deliver to the App.
  const accepted = commentJob(deliveryId, {
    ...event,
    installation: { id: OWN_TOKEN_INSTALLATION_ID },
    comment: { ...event.comment, body },
  });
  return {
    kind: "comment",
    repo: repositoryOf(event.repository),
    number: event.issue.number,
    actor: author.login,
    body,
    job: accepted?.job ?? null,
  };
}

function reviewEventOf(payload: unknown, deliveryId: string): ActionEvent {
  const event = parse(reviewEvent, payload, "pull_request_review");
  if (event.action !== "submitted")
    return { kind: "ignored", reason: `Blueprint reads submitted reviews only (this one was ${event.action}).` };
  const reviewer = event.review.user;
  if (!reviewer) return { kind: "ignored", reason: "the review has no author (a deleted account)." };
  const accepted = reviewJob(deliveryId, {
    ...event,
    installation: { id: OWN_TOKEN_INSTALLATION_ID },
    review: { ...event.review, body: event.review.body ?? null },
  });
  return {
    kind: "review",
    repo: repositoryOf(event.repository),
    number: event.pull_request.number,
    actor: reviewer.login,
    state: event.review.state,
    job: accepted?.job ?? null,
  };
}
