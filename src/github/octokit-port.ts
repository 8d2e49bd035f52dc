import type { ThreadPort } from "../workflow/ports.js";
import { branches } from "./octokit-port/branches.js";
import { checkRuns } from "./octokit-port/check-runs.js";
import { commentWrites } from "./octokit-port/comment-writes.js";
import { installation } from "./octokit-port/installation.js";
import { labels } from "./octokit-port/labels.js";
import { people } from "./octokit-port/people.js";
import { pullRequests } from "./octokit-port/pull-requests.js";
import { reviewThreads } from "./octokit-port/review-threads.js";
import { threadReads } from "./octokit-port/thread-reads.js";
import type { OctokitPortOptions } from "./octokit-port/scope.js";

export type { OctokitPortOptions, PortOctokit } from "./octokit-port/scope.js";

/**
 * The ThreadPort over GitHub's REST API, for one issue or pull request: one small factory per concern (octokit-port/).
 */
export function createOctokitPort(options: OctokitPortOptions): ThreadPort {
  const { octokit, repo, number } = options;
  const scope = { octokit, repo, number, where: { owner: repo.owner, repo: repo.name } };
  return {
    repo,
    number,
    ...threadReads(scope, options.isOwnComment),
    ...commentWrites(scope),
    ...people(scope),
    ...pullRequests(scope),
    ...installation(scope),
    ...labels(scope),
    ...branches(scope),
    checks: checkRuns(scope, {
      isOwnApp:
        options.isOwnCheckApp ??
        ((app) =>
          options.isOwnComment({
            user: { login: `${app.slug}[bot]`, type: "Bot" },
            performed_via_github_app: { id: app.id },
            body: "",
          })),
      buttons: options.checkButtons ?? true,
      isOwnRun: options.isOwnCheckRun,
    }),
    reviews: reviewThreads(scope),
  };
}
