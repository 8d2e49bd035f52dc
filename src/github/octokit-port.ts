import type { Octokit as RestOctokit } from "@octokit/rest";
import type { RepositoryInfo, ThreadPort } from "../workflow/ports.js";
import { branches } from "./octokit-port/branches.js";
import { checkRuns } from "./octokit-port/check-runs.js";
import { commentWrites } from "./octokit-port/comment-writes.js";
import { installation } from "./octokit-port/installation.js";
import { labels } from "./octokit-port/labels.js";
import { people } from "./octokit-port/people.js";
import { pullRequests } from "./octokit-port/pull-requests.js";
import { threadReads } from "./octokit-port/thread-reads.js";

/**
 * The part of Octokit the port uses. Probot's installation Octokit (the App) and @octokit/rest
 * with a token (the Action) both have it.
 */
export type PortOctokit = Pick<RestOctokit, "rest" | "paginate" | "graphql" | "auth">;

export interface OctokitPortOptions {
  octokit: PortOctokit;
  repo: RepositoryInfo;
  number: number;
  /** Comments made by this app: matched by the app id GitHub records on them, or by the bot login (and, in the Action, the state marker). */
  isOwnComment: (comment: { user: { login: string; type: string } | null; performed_via_github_app?: { id: number } | null; body: string }) => boolean;
  /** Check runs made by this app: by default, as its comments are recognised (its app id, or its bot login `<slug>[bot]`). */
  isOwnCheckApp?: ((app: { id: number; slug: string }) => boolean) | undefined;
  /** Whether check runs carry buttons: only where their clicks come back as webhooks (the App, not the Action). */
  checkButtons?: boolean | undefined;
}

/** The ThreadPort over GitHub's REST API, for one issue or pull request: one small factory per concern (octokit-port/). */
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
      isOwnApp: options.isOwnCheckApp ?? ((app) => options.isOwnComment({ user: { login: `${app.slug}[bot]`, type: "Bot" }, performed_via_github_app: { id: app.id }, body: "" })),
      buttons: options.checkButtons ?? true,
    }),
  };
}
