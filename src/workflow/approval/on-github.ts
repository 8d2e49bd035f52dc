import { parseComment } from "../../github/command.js";
import type { Job } from "../../jobs/job.js";
import { checkRunExternalId, PLAN_CHECK_NAME } from "../../shared/check-run.js";
import type { CheckRunPort, ThreadPort } from "../ports.js";

type BuildClick = Extract<Job, { kind: "check-action" }> & { action: "build" };
export type ApprovingJob = Extract<Job, { kind: "build" | "review-approval" }> | BuildClick;

/** The jobs that build: a `/build`, an approving review, a click on **Build plan vN**. */
export function isApprovingJob(job: Job): job is ApprovingJob {
  return (
    job.kind === "build" || job.kind === "review-approval" || (job.kind === "check-action" && job.action === "build")
  );
}

/**
 * Why a build job's approval is not what GitHub has (`reason`, for the log and the failed job), and, when it is a
 * person's doing rather than a forgery's — a `/build` deleted or edited before its job ran — what the thread is told
 * (`notice`).
 */
export interface Mismatch {
  reason: string;
  notice?: string;
}

/**
 * Why a build job's approval is not what GitHub has, or null when it is: read once, before its lane work, whichever
 * queue it waited in. A `/build` deleted or edited while its job waited is not run. A job taken from a shared queue
 * (`fromSharedQueue`) is data someone else could have written (docs/security.md): the `/build` comment it names must
 * also be by the job's actor, made when the job says; an approving review must be that person's, approving, submitted
 * when the job says, on that commit; a clicked check run must be this app's plan check for that thread, revision and
 * commit.
 */
export async function approvalMismatch(
  port: Pick<ThreadPort, "comment" | "review" | "checks">,
  job: ApprovingJob,
  fromSharedQueue: boolean,
): Promise<Mismatch | null> {
  const refused = (reason: string | null) => (reason === null ? null : { reason });
  if (job.kind === "build") return commandMismatch(port, job, fromSharedQueue);
  if (!fromSharedQueue) return null;
  if (job.kind === "check-action") return refused(await clickMismatch(port.checks, job));
  return refused(await reviewMismatch(port, job));
}

async function reviewMismatch(
  port: Pick<ThreadPort, "review">,
  job: Extract<ApprovingJob, { kind: "review-approval" }>,
): Promise<string | null> {
  const review = await port.review(job.reviewId);
  if (!review) return `review ${job.reviewId} does not exist on this pull request`;
  if (review.author !== job.actor) return `review ${job.reviewId} is by @${review.author}, not @${job.actor}`;
  if (review.state !== "APPROVED") return `review ${job.reviewId} is ${review.state}, not an approval`;
  if (!sameTime(review.submittedAt, job.submittedAt))
    return `review ${job.reviewId} was submitted at ${review.submittedAt ?? "no time"}, not ${job.submittedAt}`;
  if (review.commitId !== job.commitId)
    return `review ${job.reviewId} approved commit ${review.commitId}, not ${job.commitId}`;
  return null;
}

/**
 * A `/build`'s comment as GitHub has it now. One gone from the thread, or by the actor at that time but reading as
 * another command, was deleted or edited before its job ran (by its author, or someone who moderates the thread): the
 * thread is told why its build does not start, in Blueprint's own words. Other mismatches (another author, another
 * time: only a job from a shared queue is asked) are forgeries, logged only.
 */
async function commandMismatch(
  port: Pick<ThreadPort, "comment">,
  job: Extract<ApprovingJob, { kind: "build" }>,
  fromSharedQueue: boolean,
): Promise<Mismatch | null> {
  const comment = await port.comment(job.commentId);
  if (!comment) return deletedCommand(job);
  if (fromSharedQueue && comment.author !== job.actor)
    return { reason: `comment ${job.commentId} is by @${comment.author}, not @${job.actor}` };
  if (fromSharedQueue && !sameTime(comment.createdAt, job.commandCreatedAt))
    return {
      reason: `comment ${job.commentId} was made at ${comment.createdAt}, not ${job.commandCreatedAt ?? "an unknown time"}`,
    };
  return readsAsJob(comment.body, job) ? null : editedCommand(job);
}

const COMMENT_AGAIN =
  "Comment `/build` again (a new comment: an edited one is not read as a command) to build the plan.";

function deletedCommand(job: Extract<Job, { kind: "build" }>): Required<Mismatch> {
  return {
    reason: `the \`/build\` comment ${job.commentId} does not exist on this thread`,
    notice: `@${job.actor}'s \`/build\` is no longer on this thread (it was deleted before its build started), so nothing is built. ${COMMENT_AGAIN}`,
  };
}

function editedCommand(job: Extract<Job, { kind: "build" }>): Required<Mismatch> {
  return {
    reason: `comment ${job.commentId} does not read as this \`/build\` command`,
    notice: `@${job.actor}'s \`/build\` was edited before its build started and no longer reads as the command it was, so nothing is built. ${COMMENT_AGAIN}`,
  };
}

/** Whether a comment's text is the `/build` command the job carries: the same revision, steps, flags and notes. */
function readsAsJob(body: string, job: Extract<Job, { kind: "build" }>): boolean {
  const parsed = parseComment(body);
  const command = parsed.kind === "command" && parsed.command.name === "build" ? parsed.command : null;
  return (
    command !== null &&
    command.revision === job.revision &&
    command.force === job.force &&
    command.fresh === job.fresh &&
    command.notes === job.notes &&
    command.steps.length === job.steps.length &&
    command.steps.every((step, index) => step === job.steps[index])
  );
}

/**
 * A **Build plan vN** click: the check run it names must exist in this repository, be this app's
 * "Blueprint plan" check for this thread and revision, on the commit the job names. GitHub keeps no
 * record of who clicked a button or when (`requested_action` is only ever a webhook), so the clicker
 * and the click's time cannot be confirmed here: the clicker's permission is checked at triage, as
 * for a comment, and a job forged with the queue's secret can still name any such person.
 */
async function clickMismatch(checks: CheckRunPort | null, job: BuildClick): Promise<string | null> {
  const id = job.checkRunId;
  if (!checks) return `check run ${id} cannot be read here`;
  const run = await checks.get(id);
  if (!run) return `check run ${id} does not exist in this repository`;
  if (!run.own) return `check run ${id} was made by another app`;
  if (run.name !== PLAN_CHECK_NAME) return `check run ${id} is "${run.name}", not "${PLAN_CHECK_NAME}"`;
  const expected = checkRunExternalId({
    kind: "plan",
    number: job.number,
    revision: job.revision,
    planHash: job.planHash,
  });
  if (run.externalId !== expected) return `check run ${id} is for ${run.externalId ?? "nothing"}, not ${expected}`;
  if (run.headSha !== job.headSha) return `check run ${id} is on commit ${run.headSha}, not ${job.headSha}`;
  return null;
}

/** Two of GitHub's times as the same instant (one may carry milliseconds, the other not). */
function sameTime(github: string | null, claimed: string | undefined): boolean {
  if (github === null || claimed === undefined) return false;
  const time = Date.parse(github);
  return !Number.isNaN(time) && time === Date.parse(claimed);
}
