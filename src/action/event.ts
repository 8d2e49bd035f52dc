import { promises as fs } from "node:fs";
import { z } from "zod";
import { commentJob, reviewJob } from "../jobs/from-webhook.js";
import type { Job } from "../jobs/job.js";
import { OWN_TOKEN_INSTALLATION_ID } from "../jobs/one-job.js";
import type { RepositoryInfo } from "../workflow/ports.js";

const user = z.object({ login: z.string(), type: z.string() });
const repositorySchema = z.object({
  name: z.string(),
  owner: z.object({ login: z.string() }),
  clone_url: z.string(),
  default_branch: z.string(),
  html_url: z.string(),
});

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

/**
 * What the summary says was asked, and the job it asks for: null when it is not for Blueprint (a bot, a blank comment,
 * a plain review).
 */
interface Asked {
  repo: RepositoryInfo;
  number: number;
  actor: string;
  job: Job | null;
}

export type ActionEvent =
  | ({ kind: "comment"; body: string } & Asked)
  | ({ kind: "review"; state: string } & Asked)
  /** Not an event Blueprint acts on (the workflow's `on:` is broader, or the comment was edited). */
  | { kind: "ignored"; reason: string };

export class EventError extends Error {}

/** The workflow's triggering event, read from GITHUB_EVENT_PATH and validated. */
export async function readActionEvent(
  eventName: string | undefined,
  eventPath: string | undefined,
  deliveryId: string,
): Promise<ActionEvent> {
  if (!eventName || !eventPath)
    throw new EventError(
      "GITHUB_EVENT_NAME and GITHUB_EVENT_PATH are not set; Blueprint's Action only runs inside a GitHub Actions workflow.",
    );
  if (eventName !== "issue_comment" && eventName !== "pull_request_review") {
    return {
      kind: "ignored",
      reason: `Blueprint acts on issue_comment and pull_request_review events, not ${eventName}.`,
    };
  }
  let payload: unknown;
  try {
    payload = JSON.parse(await fs.readFile(eventPath, "utf8"));
  } catch (error) {
    throw new EventError(
      `could not read the event payload at ${eventPath}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return eventName === "issue_comment" ? commentEvent(payload, deliveryId) : reviewEventOf(payload, deliveryId);
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
    repo: repoInfo(event.repository),
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
    repo: repoInfo(event.repository),
    number: event.pull_request.number,
    actor: reviewer.login,
    state: event.review.state,
    job: accepted?.job ?? null,
  };
}

function parse<T>(schema: z.ZodType<T>, payload: unknown, name: string): T {
  const parsed = schema.safeParse(payload);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ");
  throw new EventError(`the ${name} event payload is not what GitHub sends: ${problems}`);
}

function repoInfo(repository: z.output<typeof repositorySchema>): RepositoryInfo {
  return {
    owner: repository.owner.login,
    name: repository.name,
    cloneUrl: repository.clone_url,
    defaultBranch: repository.default_branch,
    htmlUrl: repository.html_url,
  };
}
