import type { PullRequestDraft, ThreadPort } from "../../workflow/ports.js";
import type { ThreadScope } from "./scope.js";

/** The pull request a build opens or updates, and links to its commits. */
export function pullRequests({
  octokit,
  where,
  repo,
}: ThreadScope): Pick<ThreadPort, "upsertPullRequest" | "commitUrl"> {
  return {
    async upsertPullRequest(draft: PullRequestDraft) {
      const { data: open } = await octokit.rest.pulls.list({
        ...where,
        state: "open",
        head: `${repo.owner}:${draft.head}`,
        per_page: 1,
      });
      const existing = open[0];
      if (existing) {
        await octokit.rest.pulls.update({
          ...where,
          pull_number: existing.number,
          title: draft.title,
          body: draft.body,
        });
        // REST cannot change a pull request's draft state; GraphQL can.
        if (Boolean(existing.draft) !== draft.draft) {
          await octokit.graphql(
            draft.draft
              ? "mutation($id: ID!) { convertPullRequestToDraft(input: { pullRequestId: $id }) { pullRequest { isDraft } } }"
              : "mutation($id: ID!) { markPullRequestReadyForReview(input: { pullRequestId: $id }) { pullRequest { isDraft } } }",
            { id: existing.node_id },
          );
        }
        return { number: existing.number, url: existing.html_url, created: false };
      }
      const { data } = await octokit.rest.pulls.create({
        ...where,
        head: draft.head,
        base: draft.base,
        title: draft.title,
        body: draft.body,
        draft: draft.draft,
      });
      return { number: data.number, url: data.html_url, created: true };
    },
    commitUrl(sha) {
      return `${repo.htmlUrl}/commit/${sha}`;
    },
  };
}
