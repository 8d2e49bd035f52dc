import type { ThreadComment, ThreadInfo, ThreadPort } from "../../workflow/ports.js";
import { reviewThreads } from "./review-threads.js";
import { unlessNotFound, type IssueComment, type OctokitPortOptions, type ThreadScope } from "./scope.js";

/** Reading the thread: the issue or pull request, its comments, and its reviews. */
export function threadReads(
  scope: ThreadScope,
  isOwnComment: OctokitPortOptions["isOwnComment"],
): Pick<ThreadPort, "info" | "comments" | "comment" | "review" | "reviewComments"> {
  const { octokit, where, number } = scope;
  const threadComment = (comment: IssueComment): ThreadComment => ({
    id: comment.id,
    nodeId: comment.node_id,
    url: comment.html_url,
    body: comment.body ?? "",
    author: comment.user?.login ?? "ghost",
    authorIsBot: comment.user?.type === "Bot",
    own: isOwnComment({
      user: comment.user ?? null,
      performed_via_github_app: comment.performed_via_github_app ?? null,
      body: comment.body ?? "",
    }),
    createdAt: comment.created_at,
    updatedAt: comment.updated_at,
  });
  return {
    info: () => threadInfo(scope),
    async comments(): Promise<ThreadComment[]> {
      const all = await octokit.paginate(octokit.rest.issues.listComments, {
        ...where,
        issue_number: number,
        per_page: 100,
      });
      return all.map(threadComment);
    },
    async comment(id) {
      const comment =
        (await unlessNotFound(octokit.rest.issues.getComment({ ...where, comment_id: id }), null))?.data ?? null;
      // The comments endpoint is per repository: one on another issue is not this thread's.
      return comment && comment.issue_url.endsWith(`/issues/${number}`) ? threadComment(comment) : null;
    },
    review: (id) => reviewThreads(scope).review(number, id),
    async reviewComments(reviewId) {
      const all = await octokit.paginate(octokit.rest.pulls.listCommentsForReview, {
        ...where,
        pull_number: number,
        review_id: reviewId,
        per_page: 100,
      });
      return all.map((comment) => ({
        path: comment.path,
        line: comment.line ?? comment.original_line ?? null,
        body: comment.body,
        author: comment.user?.login ?? "ghost",
      }));
    },
  };
}

async function threadInfo(scope: ThreadScope): Promise<ThreadInfo> {
  const { octokit, where, number } = scope;
  const { data: issue } = await octokit.rest.issues.get({ ...where, issue_number: number });
  const base = { number, title: issue.title, body: issue.body ?? "", author: issue.user?.login ?? "ghost" };
  if (!issue.pull_request) return { kind: "issue", ...base };
  const pullRequest = await reviewThreads(scope).pullRequest(number);
  if (!pullRequest) throw new Error(`pull request #${number} could not be read`);
  return { kind: "pull_request", ...base, pullRequest };
}
