import { parseComment } from "../github/command.js";
import type { Job } from "../jobs/job.js";
import type { ThreadPort } from "./ports.js";

export type ApprovingJob = Extract<Job, { kind: "build" | "review-approval" }>;

/**
 * Why a build job's approval is not what GitHub has, or null when it is. A job taken from a shared
 * queue is data someone else could have written (SPEC §10): the `/build` comment it names must exist
 * on its thread, by the job's actor, made when the job says, and read as the same command; an
 * approving review must be that person's, approving, submitted when the job says, on that commit.
 */
export async function approvalMismatch(port: Pick<ThreadPort, "comment" | "review">, job: ApprovingJob): Promise<string | null> {
  if (job.kind === "review-approval") {
    const review = await port.review(job.reviewId);
    if (!review) return `review ${job.reviewId} does not exist on this pull request`;
    if (review.author !== job.actor) return `review ${job.reviewId} is by @${review.author}, not @${job.actor}`;
    if (review.state !== "APPROVED") return `review ${job.reviewId} is ${review.state}, not an approval`;
    if (!sameTime(review.submittedAt, job.submittedAt)) return `review ${job.reviewId} was submitted at ${review.submittedAt ?? "no time"}, not ${job.submittedAt}`;
    if (review.commitId !== job.commitId) return `review ${job.reviewId} approved commit ${review.commitId}, not ${job.commitId}`;
    return null;
  }
  const comment = await port.comment(job.commentId);
  if (!comment) return `the \`/build\` comment ${job.commentId} does not exist on this thread`;
  if (comment.author !== job.actor) return `comment ${job.commentId} is by @${comment.author}, not @${job.actor}`;
  if (!sameTime(comment.createdAt, job.commandCreatedAt)) return `comment ${job.commentId} was made at ${comment.createdAt}, not ${job.commandCreatedAt ?? "an unknown time"}`;
  const parsed = parseComment(comment.body);
  const command = parsed.kind === "command" && parsed.command.name === "build" ? parsed.command : null;
  const same =
    command !== null &&
    command.revision === job.revision &&
    command.force === job.force &&
    command.fresh === job.fresh &&
    command.notes === job.notes &&
    command.steps.length === job.steps.length &&
    command.steps.every((step, index) => step === job.steps[index]);
  return same ? null : `comment ${job.commentId} does not read as this \`/build\` command`;
}

/** Two of GitHub's times as the same instant (one may carry milliseconds, the other not). */
function sameTime(github: string | null, claimed: string | undefined): boolean {
  if (github === null || claimed === undefined) return false;
  const time = Date.parse(github);
  return !Number.isNaN(time) && time === Date.parse(claimed);
}
