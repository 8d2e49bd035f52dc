import { atLeast } from "../github/permission.js";
import { parsePlanArgument } from "../github/command.js";
import { GATED_KINDS, jobLabel, LANE_KINDS, threadOf, type Job } from "../jobs/job.js";
import type { PermissionCache } from "../jobs/permission-cache.js";
import { approvalMismatch, isApprovingJob } from "./approval/index.js";
import { buildThread } from "./build/index.js";
import { answerCancel, withdrawBuildQuestion } from "./cancel.js";
import { handleCheckClick } from "./check-action.js";
import type { JobContext, WorkflowDeps } from "./deps.js";
import { HELP_TEXT, refusalReply, statusReply } from "./help.js";
import { plainError } from "./plain-error.js";
import { planThread } from "./plan/index.js";
import type { ReviewComment, ThreadPort } from "./ports.js";
import { respondToComment } from "./respond.js";
import { safePort } from "./safe-port.js";
import { followClosedPullRequest } from "./pull-request-closed.js";
import {
  buildWaitingFollowUp,
  followFailingChecks,
  followUpHome,
  followUpThread,
  reviewCommentsOf,
} from "./follow-up/index.js";
import { markStaleOnPush } from "./stale.js";

/** A thread's lane, wherever the queue keeps it (in this process, or in Redis for every worker). */
export interface ThreadLanes {
  /** Queues lane work on its thread: how many jobs are ahead, what runs now, and whether every slot is busy. */
  enqueue(job: Job): Promise<{ ahead: number; running: string | null; full: boolean }>;
  /** Stops the thread's running job (at its next safe point) and drops its waiting ones. */
  cancel(thread: string): Promise<{ running: string | null; dropped: number }>;
  runningLabel(thread: string): Promise<string | null>;
}

export interface JobPorts {
  /** Its own GitHub budget: the 👀 and the permission check never wait behind a job's writes. */
  ack: ThreadPort;
  /**
   * Quick answers (refusals, /help, /status, /cancel): a budget of their own too, so they neither wait
   * behind a job's writes nor spend the ack budget's pacing (one write a second) that the next 👀 needs.
   */
  reply: ThreadPort;
  work: ThreadPort;
}

/** GitHub could not say whether the actor may command us: the job's claim is released so a redelivery is handled. */
export class PermissionUnknown extends Error {
  constructor(readonly reason: unknown) {
    super(`could not read the actor's permission: ${plainError(reason)}`);
  }
}

/**
 * The ports a worker hands the use cases: bodies redacted and fitted, and permissions read through
 * one cache, so the check at triage and the checks inside the job cost one GitHub call.
 */
export function workerPorts(deps: WorkflowDeps, raw: JobPorts, permissions: PermissionCache): JobPorts {
  const wrap = (port: ThreadPort): ThreadPort => {
    const safe = safePort(port, deps.redact, deps.stateKey);
    const repository = `${safe.repo.owner}/${safe.repo.name}`;
    return { ...safe, permission: (login) => permissions.get(repository, login, () => safe.permission(login)) };
  };
  return { ack: wrap(raw.ack), reply: wrap(raw.reply), work: wrap(raw.work) };
}

/**
 * The first thing a worker does with a job: authorise, acknowledge (👀), answer what is quick, and
 * queue the rest on its thread. Runs before any slow work, whatever is running elsewhere. `answerOnce` (jobs from a
 * shared queue): a quick answer whose comment already had Blueprint's 👀 is not given again.
 */
export async function triageJob(
  deps: WorkflowDeps,
  ports: JobPorts,
  lanes: ThreadLanes,
  job: Job,
  { answerOnce = false }: { answerOnce?: boolean } = {},
): Promise<void> {
  const port = ports.ack;
  // Answers on their own budget: the ack budget's pacing (one write a second per installation) is
  // spent on 👀 alone, so a refusal never delays the next command's 👀.
  const answer = ports.reply;
  // 1. Authorise with the collaborator-permission endpoint (docs/workflow.md, "Who may command"). An approving review
  //    by someone who may not approve still reaches the build, which says why it does not count.
  if (GATED_KINDS.has(job.kind) && job.kind !== "review-approval") {
    const level = await port.permission(job.actor).catch((error: unknown) => {
      throw new PermissionUnknown(error);
    });
    if (!atLeast(level, deps.minPermission)) {
      // A review by someone who may not command changes nothing, without a word; a command gets the one refusal.
      const silent =
        job.kind === "review-changes" ||
        (job.kind === "follow-up" && job.commentId === null) ||
        (job.kind === "reply" && job.silentIfRefused);
      if (!silent) await answer.postComment(refusalReply(job.actor, deps.minPermission));
      return;
    }
  }
  // 2. Acknowledge a command within seconds.
  const acknowledgedBefore = await acknowledge(deps, port, job);
  // 3. Quick answers now; the rest waits its turn on the thread. From a shared queue, a quick answer is given once per
  //    comment: its 👀 already there means it was triaged before (a job put back in Redis, docs/security.md). The
  //    local queue, the Action (a re-run is a person's) and the CLI answer again.
  if (answerOnce && acknowledgedBefore && QUICK_KINDS.has(job.kind)) {
    deps.log.warn(
      { deliveryId: job.deliveryId, job: jobLabel(job) },
      "not answering a command again: Blueprint had already acknowledged its comment",
    );
    return;
  }
  const thread = threadOf(job);
  switch (job.kind) {
    case "help":
      await answer.postComment(HELP_TEXT);
      return;
    case "status":
      await answer.postComment(await statusReply(port, await lanes.runningLabel(thread), deps.stateKey));
      return;
    case "reply":
      await answer.postComment(job.text);
      return;
    case "cancel":
      await answerCancel(
        deps,
        ports,
        { stop: () => cancelLanes(ports.ack, lanes, job), enqueue: async () => void (await lanes.enqueue(job)) },
        job,
      );
      return;
  }
  if (!LANE_KINDS.has(job.kind)) return;
  const queued = await lanes.enqueue(await onItsHomeThread(port, job));
  if (job.kind === "respond" || job.kind === "stale" || job.kind === "pull-closed" || job.kind === "check-failure")
    return;
  const notice =
    queued.ahead > 0
      ? `Queued: Blueprint is busy on this thread (${queued.running ?? "a job"}); this starts when it is done.`
      : queued.full
        ? "Queued: Blueprint is running as many jobs as it may at once; this starts when one of them ends."
        : null;
  // Not an acknowledgement: on the job's budget, and not awaited, so the next command's triage never waits behind it.
  if (notice)
    void ports.work
      .postComment(notice)
      .catch((error: unknown) => deps.log.warn({ err: error }, "could not post the queued notice"));
}

/** The commands answered at triage, never queued (`/cancel` answered there, or queued for a build's question). */
const QUICK_KINDS: ReadonlySet<Job["kind"]> = new Set(["help", "status", "reply", "cancel"]);

/**
 * The 👀 on a command's comment. True when GitHub says this App had reacted to it already: the comment was triaged
 * before. A reaction that fails is logged, and counts as new (the command is answered).
 */
async function acknowledge(deps: WorkflowDeps, port: ThreadPort, job: Job): Promise<boolean> {
  if (job.kind === "respond" || !("commentId" in job) || job.commentId === null) return false;
  const added = await port.reactToComment(job.commentId, "eyes").catch((error: unknown) => {
    deps.log.warn({ err: error, deliveryId: job.deliveryId }, "could not react");
  });
  return added === false;
}

/**
 * A review or `/fix` on a pull request Blueprint built for an issue goes to the issue's lane: its plan, its build and
 * its branch live there, so the follow-up waits for (and never runs beside) anything else on that plan.
 */
async function onItsHomeThread(port: ThreadPort, job: Job): Promise<Job> {
  if (job.kind !== "follow-up" && job.kind !== "review-changes") return job;
  const pullRequest = job.kind === "follow-up" ? job.pullRequest : job.number;
  const issue = await followUpHome(port, pullRequest);
  if (issue === null) return job;
  if (job.kind === "follow-up") return { ...job, number: issue };
  const { body, ...review } = job;
  return {
    ...review,
    kind: "follow-up",
    number: issue,
    pullRequest,
    commentId: null,
    reviewState: "changes_requested",
    text: body,
  };
}

/** `/cancel` on a Blueprint pull request stops what runs on it, and the follow-up running on its issue's lane. */
async function cancelLanes(
  port: ThreadPort,
  lanes: ThreadLanes,
  job: Job,
): Promise<{ running: string | null; dropped: number }> {
  const here = await lanes.cancel(threadOf(job));
  const issue = await followUpHome(port, job.number).catch(() => null);
  if (issue === null) return here;
  const home = await lanes.cancel(threadOf({ repository: job.repository, number: issue }));
  return { running: here.running ?? home.running, dropped: here.dropped + home.dropped };
}

/** Lane work: the use case behind a job. Anything that escapes gets a short message on the thread, never silence. */
export async function workJob(deps: WorkflowDeps, port: ThreadPort, job: Job, signal: AbortSignal): Promise<void> {
  // While it runs, nothing removes or evicts its repository's files (the clone URL the use cases sync).
  const repository = {
    installationId: job.installationId,
    owner: port.repo.owner,
    name: port.repo.name,
    cloneUrl: port.repo.cloneUrl,
  };
  await (deps.workdir
    ? deps.workdir.use(repository, () => useCase(deps, port, job, signal))
    : useCase(deps, port, job, signal));
}

async function useCase(deps: WorkflowDeps, port: ThreadPort, job: Job, signal: AbortSignal): Promise<void> {
  const context: JobContext = { port, actor: job.actor, signal, deliveryId: job.deliveryId };
  try {
    switch (job.kind) {
      case "plan":
      case "revise":
      case "follow-up":
      case "review-changes":
        return await planOrFollowUp(deps, context, job);
      case "build":
      case "review-approval":
        return await approvedBuild(deps, context, job);
      case "respond":
        return await respondToComment(deps, context, { commentId: job.commentId, body: job.body });
      case "check-failure":
        return await followFailingChecks(deps, context, job);
      case "stale":
        return await markStaleOnPush(deps, context, job.headSha);
      case "pull-closed":
        return await followClosedPullRequest(deps, context, job);
      case "check-action":
        return await handleCheckClick(deps, context, job);
      case "cancel":
        // Queued at triage only for a build's question (see triageJob).
        return await withdrawBuildQuestion(deps, context);
      default:
        throw new Error(`a ${job.kind} job is answered at triage, not queued`);
    }
  } catch (error) {
    await reportFailedJob(deps.log, port, job, error);
  }
}

/** `/plan`, `/revise`, and a review or `/fix`: a follow-up once the plan is built, before that a revision. */
async function planOrFollowUp(
  deps: WorkflowDeps,
  context: JobContext,
  job: Extract<Job, { kind: "plan" | "revise" | "follow-up" | "review-changes" }>,
): Promise<void> {
  const { port } = context;
  switch (job.kind) {
    case "plan": {
      // The job carries `/plan`'s argument as written; intake refused a malformed `--model` already.
      const argument = parsePlanArgument(job.instructions);
      if (!argument.ok) {
        await port.postComment(argument.message);
        return;
      }
      return await planThread(deps, context, {
        trigger: { kind: "plan", instructions: argument.instructions, model: argument.model },
        commandCommentId: job.commentId,
      });
    }
    case "revise":
      return await planThread(deps, context, {
        trigger: { kind: "feedback", feedback: { author: job.actor, source: "revise", text: job.feedback } },
        commandCommentId: job.commentId,
      });
    case "follow-up": {
      // Before the plan is built, "request changes" revises it as it always did; other reviews start nothing.
      if ((await followUpThread(deps, context, job)) === "followed" || job.reviewState !== "changes_requested") return;
      if (job.reviewId === null) return;
      const text = reviewFeedback(job.text, await reviewCommentsOf(port, job.pullRequest, job.reviewId));
      return await planThread(deps, context, {
        trigger: { kind: "feedback", feedback: { author: job.actor, source: "review", text } },
      });
    }
    case "review-changes": {
      const review = { pullRequest: job.number, commentId: null, reviewId: job.reviewId, text: job.body };
      const asked = { ...review, reviewState: "changes_requested" as const };
      if ((await followUpThread(deps, context, asked)) === "followed") return;
      const text = reviewFeedback(job.body, await port.reviewComments(job.reviewId));
      return await planThread(deps, context, {
        trigger: { kind: "feedback", feedback: { author: job.actor, source: "review", text } },
      });
    }
  }
}

/** `/build` (or the follow-up steps waiting for it) and an approving review: the approval each one is. */
async function approvedBuild(
  deps: WorkflowDeps,
  context: JobContext,
  job: Extract<Job, { kind: "build" | "review-approval" }>,
): Promise<void> {
  const minimumPermission = deps.minPermission;
  if (job.kind === "build") {
    if (await buildWaitingFollowUp(deps, context, job)) return;
    const approval = {
      approver: job.actor,
      revision: job.revision,
      steps: job.steps,
      force: job.force,
      permitted: true,
      minimumPermission,
      commandCommentId: job.commentId,
      commandCreatedAt: job.commandCreatedAt,
    };
    return await buildThread(deps, context, {
      approval,
      fresh: job.fresh,
      note: { author: job.actor, source: "build", text: job.notes },
    });
  }
  const permitted = atLeast(await context.port.permission(job.actor), minimumPermission);
  const approval = {
    approver: job.actor,
    revision: null,
    steps: [],
    force: false,
    reviewCommit: job.commitId,
    submittedAt: job.submittedAt,
    permitted,
    minimumPermission,
  };
  return await buildThread(deps, context, {
    approval,
    fresh: false,
    note: { author: job.actor, source: "review", text: job.body },
  });
}

export { isApprovingJob };

/**
 * Why a build job must not run, or null when it may: its approval read once from GitHub as its lane work starts,
 * whichever queue it waited in (`approvalMismatch`; `fromSharedQueue`: a Redis worker's, which also refuses a
 * forgery). A `/build` deleted or edited while its job waited builds nothing, and the thread is told why.
 */
export async function refusedApproval(
  deps: WorkflowDeps,
  port: ThreadPort,
  job: Job,
  fromSharedQueue: boolean,
): Promise<string | null> {
  const mismatch = isApprovingJob(job) ? await approvalMismatch(port, job, fromSharedQueue) : null;
  if (!mismatch) return null;
  const fields = { deliveryId: job.deliveryId, job: jobLabel(job), reason: mismatch.reason };
  if (fromSharedQueue) deps.log.error(fields, "refused a build job: its approval is not on GitHub as the job says");
  else deps.log.warn(fields, "a /build was taken back before its build started");
  if (mismatch.notice)
    await port
      .postComment(mismatch.notice)
      .catch((error: unknown) =>
        deps.log.warn(
          { err: error, deliveryId: job.deliveryId },
          "could not say on the thread why a build did not start",
        ),
      );
  return mismatch.reason;
}

/**
 * A job that failed where its use case could not say so itself: logged, and a short message on its thread, never
 * silence.
 */
export async function reportFailedJob(
  log: WorkflowDeps["log"],
  port: Pick<ThreadPort, "postComment">,
  job: Job,
  error: unknown,
): Promise<void> {
  const label = jobLabel(job);
  log.error({ err: error, deliveryId: job.deliveryId, job: label }, "job failed");
  await port
    .postComment(
      `❌ Blueprint stopped while ${label}: ${plainError(error)} Nothing already pushed was lost; comment the command again to retry. (delivery \`${job.deliveryId}\`)`,
    )
    .catch((postError: unknown) =>
      log.error({ err: postError, deliveryId: job.deliveryId }, "could not report a failed job"),
    );
}

/** A "request changes" review as feedback: its body, then each inline comment with file and line. */
function reviewFeedback(body: string, inline: ReviewComment[]): string {
  const parts = [body.trim() || "(no summary)"];
  for (const comment of inline)
    parts.push(`- \`${comment.path}${comment.line ? `:${comment.line}` : ""}\`: ${comment.body.trim()}`);
  return parts.join("\n");
}
