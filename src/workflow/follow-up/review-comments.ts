import type { ReviewComment, ThreadPort } from "../ports.js";

/**
 * The inline comments of one review, with file and line: from the pull request's own thread, or (for a pull request
 * Blueprint built for an issue, whose plan lives on the issue) from its review threads.
 */
export async function reviewCommentsOf(
  port: ThreadPort,
  pullRequest: number,
  reviewId: number,
): Promise<ReviewComment[]> {
  if (port.number === pullRequest || !port.reviews) return port.reviewComments(reviewId);
  const threads = await port.reviews.threads(pullRequest);
  return threads.flatMap((thread) =>
    thread.comments
      .filter((comment) => comment.reviewId === reviewId)
      .map((comment) => ({ path: thread.path, line: thread.line, body: comment.body, author: comment.author })),
  );
}
