import { z } from "zod";
import { parseComment } from "../github/command.js";
import { parseCheckRunExternalId, PLAN_CHECK_NAME } from "../shared/check-run.js";
import { typoReply } from "../workflow/help.js";
import { issueOfBuildBranch } from "../shared/build-branch.js";
import { checkSuiteJob } from "./from-check-suite.js";
import type { Job, Removal } from "./job.js";
import { isBot, repositoryOf, type Accepted, type PayloadRepository, type PayloadUser } from "./payload.js";

export type { Accepted } from "./payload.js";
export { checkSuiteJob } from "./from-check-suite.js";

/** `issue_comment.created` as a job, or null when it is not for Blueprint (bots, blank comments). Pure: no I/O. */
export function commentJob(
  deliveryId: string,
  payload: {
    installation?: { id: number } | undefined;
    repository: PayloadRepository;
    issue: { number: number };
    comment: { id: number; body: string; user: PayloadUser | null; created_at?: string | undefined };
    sender: PayloadUser;
  },
  receivedAt = Date.now(),
): Accepted | null {
  const author = payload.comment.user;
  const installationId = payload.installation?.id;
  // Bots (Blueprint included) never command: neither as the comment's author nor as the one who sent the event.
  if (!installationId || !author || isBot(author) || isBot(payload.sender)) return null;
  const job = commandJob(
    {
      deliveryId,
      installationId,
      repository: repositoryOf(payload.repository),
      number: payload.issue.number,
      actor: author.login,
      receivedAt,
      commentId: payload.comment.id,
    },
    payload.comment.body,
    payload.comment.created_at,
  );
  return job ? { job, keys: [`delivery:${deliveryId}`, `comment:${payload.comment.id}`] } : null;
}

/** What every job made from a comment carries: where it was made, by whom, and which comment. */
export type CommentJobBase = Omit<Extract<Job, { kind: "help" }>, "kind">;

/**
 * A comment's text as a job: the one place that maps a command to the use case it asks for (the
 * App's webhooks, the Action's event and the CLI's subcommands all come through here). Null for a
 * blank comment. `createdAt`: GitHub's time of the comment, which a `/build` approves as of.
 */
export function commandJob(base: CommentJobBase, body: string, createdAt?: string): Job | null {
  const parsed = parseComment(body);
  switch (parsed.kind) {
    case "none":
      return body.trim() === "" ? null : { kind: "respond", ...base, body };
    case "typo":
      return { kind: "reply", ...base, text: typoReply(parsed.word, parsed.suggestion), silentIfRefused: true };
    case "invalid":
      return { kind: "reply", ...base, text: parsed.message, silentIfRefused: false };
  }
  const command = parsed.command;
  switch (command.name) {
    case "plan":
      return { kind: "plan", ...base, instructions: command.instructions };
    case "revise":
      return { kind: "revise", ...base, feedback: command.feedback };
    case "build":
      return {
        kind: "build",
        ...base,
        revision: command.revision,
        steps: command.steps,
        force: command.force,
        fresh: command.fresh,
        notes: command.notes,
        commandCreatedAt: createdAt,
      };
    case "fix":
      return {
        kind: "follow-up",
        ...base,
        pullRequest: base.number,
        reviewId: null,
        reviewState: null,
        text: command.notes,
      };
    case "cancel":
    case "help":
    case "status":
      return { kind: command.name, ...base };
  }
}

/**
 * `pull_request_review.submitted`: an approval is a `/build`, "request changes" is feedback; other reviews are not for
 * us.
 */
export function reviewJob(
  deliveryId: string,
  payload: {
    installation?: { id: number } | undefined;
    repository: PayloadRepository;
    pull_request: { number: number };
    review: {
      id: number;
      state: string;
      body: string | null;
      commit_id: string;
      submitted_at?: string | null | undefined;
      user: PayloadUser | null;
    };
    sender: PayloadUser;
  },
  receivedAt = Date.now(),
): Accepted | null {
  const reviewer = payload.review.user;
  const installationId = payload.installation?.id;
  if (!installationId || !reviewer || isBot(reviewer) || isBot(payload.sender)) return null;
  const base = {
    deliveryId,
    installationId,
    repository: repositoryOf(payload.repository),
    number: payload.pull_request.number,
    actor: reviewer.login,
    receivedAt,
    reviewId: payload.review.id,
  };
  const keys = [`delivery:${deliveryId}`, `review:${payload.review.id}`];
  const state = payload.review.state.toLowerCase();
  if (state === "approved") {
    const submittedAt = payload.review.submitted_at ?? new Date(receivedAt).toISOString();
    return {
      job: {
        kind: "review-approval",
        ...base,
        commitId: payload.review.commit_id,
        submittedAt,
        body: payload.review.body ?? "",
      },
      keys,
    };
  }
  if (state === "changes_requested")
    return { job: { kind: "review-changes", ...base, body: payload.review.body ?? "" }, keys };
  // A comment-only review matters once a plan is built (a follow-up); whether one is, the worker reads.
  if (state === "commented") {
    const { reviewId, ...rest } = base;
    const followUp = { kind: "follow-up" as const, ...rest, pullRequest: base.number, commentId: null, reviewId };
    return { job: { ...followUp, reviewState: "commented", text: payload.review.body ?? "" }, keys };
  }
  return null;
}

/** `pull_request.synchronize`: new commits may make a pending plan stale. */
export function synchronizeJob(
  deliveryId: string,
  payload: {
    installation?: { id: number } | undefined;
    repository: PayloadRepository;
    pull_request: { number: number; head: { sha: string } };
    sender: PayloadUser;
  },
  receivedAt = Date.now(),
): Accepted | null {
  const installationId = payload.installation?.id;
  if (!installationId) return null;
  return {
    job: {
      kind: "stale",
      deliveryId,
      installationId,
      repository: repositoryOf(payload.repository),
      number: payload.pull_request.number,
      actor: payload.sender.login,
      receivedAt,
      headSha: payload.pull_request.head.sha,
    },
    keys: [`delivery:${deliveryId}`],
  };
}

/**
 * `pull_request.closed` for a pull request a bot opened from a branch of this repository named like
 * Blueprint's (`…issue-<n>`): a job on issue n, whose plan's state decides whether the pull request is
 * really Blueprint's. Anything else is not for Blueprint.
 */
export function closedJob(
  deliveryId: string,
  payload: {
    installation?: { id: number } | undefined;
    repository: PayloadRepository;
    pull_request: {
      number: number;
      merged?: boolean | null;
      user: PayloadUser | null;
      head: { ref: string; sha: string; repo: { full_name: string } | null };
      base: { repo: { full_name: string } };
    };
    sender: PayloadUser;
  },
  receivedAt = Date.now(),
): Accepted | null {
  const pull = payload.pull_request;
  const installationId = payload.installation?.id;
  const issue = issueOfBuildBranch(pull.head.ref);
  if (
    !installationId ||
    !issue ||
    !pull.user ||
    !isBot(pull.user) ||
    pull.head.repo?.full_name !== pull.base.repo.full_name
  )
    return null;
  return {
    job: {
      kind: "pull-closed",
      deliveryId,
      installationId,
      repository: repositoryOf(payload.repository),
      number: issue,
      actor: payload.sender.login,
      receivedAt,
      pullRequest: pull.number,
      merged: pull.merged === true,
      headRef: pull.head.ref,
      headSha: pull.head.sha,
    },
    keys: [`delivery:${deliveryId}`],
  };
}

/**
 * `check_run.requested_action`: a button on a "Blueprint plan" check run, as `/build` or `/revise` by
 * whoever clicked, bound to the revision and commit of that check. Bots' clicks, other checks and
 * unknown buttons are not for us; whether the check is Blueprint's own (its app) is checked by the worker.
 */
export function checkActionJob(
  deliveryId: string,
  payload: {
    installation?: { id: number } | undefined;
    repository: PayloadRepository;
    check_run: {
      id: number;
      name: string;
      external_id: string | null;
      head_sha: string;
      app: { id: number; slug?: string | undefined } | null;
    };
    requested_action?: { identifier: string } | null | undefined;
    sender: PayloadUser;
  },
  receivedAt = Date.now(),
): Accepted | null {
  const installationId = payload.installation?.id;
  const run = payload.check_run;
  const action = payload.requested_action?.identifier;
  const binding = parseCheckRunExternalId(run.external_id);
  if (
    !installationId ||
    isBot(payload.sender) ||
    run.name !== PLAN_CHECK_NAME ||
    !run.app ||
    !binding ||
    binding.kind !== "plan"
  )
    return null;
  if (action !== "build" && action !== "revise") return null;
  return {
    job: {
      kind: "check-action",
      deliveryId,
      installationId,
      repository: repositoryOf(payload.repository),
      number: binding.number,
      actor: payload.sender.login,
      receivedAt,
      action,
      revision: binding.revision,
      headSha: run.head_sha,
      checkRunId: run.id,
      ...(binding.planHash ? { planHash: binding.planHash } : {}),
      app: { id: run.app.id, slug: run.app.slug ?? "" },
      clickedAt: new Date(receivedAt).toISOString(),
    },
    keys: [`delivery:${deliveryId}`],
  };
}

/**
 * A verified delivery as a job, by event and action (the App's webhook route): null when it is not
 * for Blueprint. The payload's shape is GitHub's, checked by its signature.
 */
export function deliveryJob(delivery: { id: string; name: string; payload: unknown }): Accepted | null {
  const action = (delivery.payload as { action?: unknown } | null)?.action;
  const toJob = HANDLERS[`${delivery.name}.${String(action)}` as HandledEvent] as
    ((id: string, payload: unknown) => Accepted | null) | undefined;
  return toJob ? toJob(delivery.id, delivery.payload) : null;
}

/** The webhook events (with their action) that become jobs; app.yml subscribes to exactly their events. */
const HANDLERS = {
  "issue_comment.created": commentJob,
  "pull_request_review.submitted": reviewJob,
  "pull_request.synchronize": synchronizeJob,
  "pull_request.closed": closedJob,
  "check_run.requested_action": checkActionJob,
  "check_suite.completed": checkSuiteJob,
};
export type HandledEvent = keyof typeof HANDLERS;
export const HANDLED_EVENTS = Object.keys(HANDLERS) as HandledEvent[];

const fullName = z.string().regex(/^[^/]+\/[^/]+$/);
const removalPayloads = {
  "installation.deleted": z.object({ installation: z.object({ id: z.number().int().positive() }) }),
  "installation_repositories.removed": z.object({
    installation: z.object({ id: z.number().int().positive() }),
    repositories_removed: z.array(z.object({ full_name: fullName })),
  }),
};

/**
 * `installation.deleted` and `installation_repositories.removed` as a removal, or null for any other
 * delivery. GitHub sends both to every App unasked: app.yml cannot (and need not) subscribe to them.
 * An uninstall covers every repository Blueprint has files of for the installation, listed or not.
 */
export function deliveryRemoval(
  delivery: { id: string; name: string; payload: unknown },
  receivedAt = Date.now(),
): Removal | null {
  const action = (delivery.payload as { action?: unknown } | null)?.action;
  const event = `${delivery.name}.${String(action)}`;
  if (event === "installation.deleted") {
    const payload = removalPayloads[event].safeParse(delivery.payload);
    return payload.success
      ? { deliveryId: delivery.id, installationId: payload.data.installation.id, repositories: null, receivedAt }
      : null;
  }
  if (event === "installation_repositories.removed") {
    const payload = removalPayloads[event].safeParse(delivery.payload);
    if (!payload.success || payload.data.repositories_removed.length === 0) return null;
    const repositories = payload.data.repositories_removed.map((repository) => {
      const [owner = "", name = ""] = repository.full_name.split("/");
      return { owner, name };
    });
    return { deliveryId: delivery.id, installationId: payload.data.installation.id, repositories, receivedAt };
  }
  return null;
}

/** The events whose deliveries `deliveryRemoval` reads (Probot's `app.on` names). */
export const REMOVAL_EVENTS = ["installation.deleted", "installation_repositories.removed"] as const;
