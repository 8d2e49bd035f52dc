import { z } from "zod";
import type { PullRequestFacts, ReviewPort, ReviewThread } from "../../workflow/ports.js";
import { unlessNotFound, type ThreadScope } from "./scope.js";

/**
 * A pull request's review threads: read through GraphQL (REST does not say whether a thread is resolved or
 * outdated), answered through REST, resolved through GraphQL.
 */
const THREADS_QUERY = `query($owner: String!, $name: String!, $number: Int!, $cursor: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 50, after: $cursor) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id isResolved isOutdated path line startLine diffSide
          comments(first: 100) {
            nodes { databaseId body url diffHunk author { login __typename } pullRequestReview { databaseId } }
          }
        }
      }
    }
  }
}`;

const RESOLVE_MUTATION =
  "mutation($id: ID!) { resolveReviewThread(input: { threadId: $id }) { thread { id isResolved } } }";

const threadsPage = z.object({
  repository: z.object({
    pullRequest: z
      .object({
        reviewThreads: z.object({
          pageInfo: z.object({ hasNextPage: z.boolean(), endCursor: z.string().nullable() }),
          nodes: z.array(
            z.object({
              id: z.string(),
              isResolved: z.boolean(),
              isOutdated: z.boolean(),
              path: z.string(),
              line: z.number().int().nullable(),
              startLine: z.number().int().nullable(),
              diffSide: z.enum(["LEFT", "RIGHT"]),
              comments: z.object({
                nodes: z.array(
                  z.object({
                    databaseId: z.number().int().nullable(),
                    body: z.string(),
                    url: z.string(),
                    diffHunk: z.string(),
                    author: z.object({ login: z.string(), __typename: z.string() }).nullable(),
                    pullRequestReview: z.object({ databaseId: z.number().int().nullable() }).nullable(),
                  }),
                ),
              }),
            }),
          ),
        }),
      })
      .nullable(),
  }),
});

/** Enough pages for any pull request a person reviews; a pull request with more threads is read in part. */
const MAX_PAGES = 10;

export function reviewThreads({ octokit, where, repo }: ThreadScope): ReviewPort {
  return {
    async pullRequest(number): Promise<PullRequestFacts | null> {
      const pr = (await unlessNotFound(octokit.rest.pulls.get({ ...where, pull_number: number }), null))?.data;
      if (!pr) return null;
      return {
        number,
        headRef: pr.head.ref,
        headSha: pr.head.sha,
        baseRef: pr.base.ref,
        sameRepo: pr.head.repo?.full_name === pr.base.repo.full_name,
        url: pr.html_url,
        // Typed as always there; a test double or an old GitHub Enterprise may leave it out.
        author: (pr.user as typeof pr.user | null)?.login ?? "ghost",
        authorIsBot: (pr.user as typeof pr.user | null)?.type === "Bot",
        open: pr.state === "open",
      };
    },
    async review(pullRequest, reviewId) {
      const review = (
        await unlessNotFound(
          octokit.rest.pulls.getReview({ ...where, pull_number: pullRequest, review_id: reviewId }),
          null,
        )
      )?.data;
      return review
        ? {
            author: review.user?.login ?? "ghost",
            state: review.state,
            submittedAt: review.submitted_at ?? null,
            commitId: review.commit_id ?? "",
          }
        : null;
    },
    async threads(pullRequest) {
      const threads: ReviewThread[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < MAX_PAGES; page++) {
        const data = threadsPage.parse(
          await octokit.graphql(THREADS_QUERY, { owner: repo.owner, name: repo.name, number: pullRequest, cursor }),
        );
        const connection = data.repository.pullRequest?.reviewThreads;
        if (!connection) break;
        threads.push(...connection.nodes.map(toThread));
        if (!connection.pageInfo.hasNextPage) break;
        cursor = connection.pageInfo.endCursor;
      }
      return threads;
    },
    async reply(pullRequest, commentId, body) {
      const { data } = await octokit.rest.pulls.createReplyForReviewComment({
        ...where,
        pull_number: pullRequest,
        comment_id: commentId,
        body,
      });
      return { id: data.id, url: data.html_url };
    },
    async resolve(threadId) {
      await octokit.graphql(RESOLVE_MUTATION, { id: threadId });
    },
    async comment(pullRequest, body) {
      const { data } = await octokit.rest.issues.createComment({ ...where, issue_number: pullRequest, body });
      return { id: data.id, url: data.html_url };
    },
  };
}

type ThreadNode = z.output<typeof threadsPage>["repository"]["pullRequest"] extends infer P
  ? P extends { reviewThreads: { nodes: Array<infer N> } }
    ? N
    : never
  : never;

function toThread(node: ThreadNode): ReviewThread {
  return {
    id: node.id,
    path: node.path,
    line: node.line,
    startLine: node.startLine,
    side: node.diffSide,
    resolved: node.isResolved,
    outdated: node.isOutdated,
    diffHunk: node.comments.nodes[0]?.diffHunk ?? "",
    comments: node.comments.nodes.flatMap((comment) =>
      comment.databaseId === null
        ? []
        : [
            {
              id: comment.databaseId,
              author: comment.author?.login ?? "ghost",
              authorIsBot: comment.author?.__typename === "Bot",
              body: comment.body,
              url: comment.url,
              reviewId: comment.pullRequestReview?.databaseId ?? null,
            },
          ],
    ),
  };
}
