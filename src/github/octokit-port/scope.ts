import type { Octokit as RestOctokit } from "@octokit/rest";
import type { RepositoryInfo } from "../../workflow/ports.js";

/**
 * The part of Octokit the port uses. Probot's installation Octokit (the App) and @octokit/rest
 * with a token (the Action) both have it.
 */
export type PortOctokit = Pick<RestOctokit, "rest" | "paginate" | "graphql" | "auth">;

export interface OctokitPortOptions {
  octokit: PortOctokit;
  repo: RepositoryInfo;
  number: number;
  /**
   * Comments made by this app: matched by the app id GitHub records on them, or by the bot login (and, in the Action,
   * the state marker).
   */
  isOwnComment: (comment: {
    user: { login: string; type: string } | null;
    performed_via_github_app?: { id: number } | null;
    body: string;
  }) => boolean;
  /**
   * Check runs made by this app: by default, as its comments are recognised (its app id, or its bot login
   * `<slug>[bot]`).
   */
  isOwnCheckApp?: ((app: { id: number; slug: string }) => boolean) | undefined;
  /**
   * Check runs that are Blueprint's own (found to update; never a failure to fix): by default, every run its app made.
   * The Action's token may be an app's that other workflows write check runs with too (GitHub Actions').
   */
  isOwnCheckRun?: ((run: OwnCheckRunFacts) => boolean) | undefined;
  /** Whether check runs carry buttons: only where their clicks come back as webhooks (the App, not the Action). */
  checkButtons?: boolean | undefined;
}

/** What tells a check run's maker, as the Checks API lists it. */
export interface OwnCheckRunFacts {
  name: string;
  external_id?: string | null | undefined;
  app: { id: number; slug?: string | undefined } | null;
}

/** What every part of the port works on: one Octokit, one repository, one issue or pull request. */
export interface ThreadScope {
  octokit: PortOctokit;
  repo: RepositoryInfo;
  number: number;
  /** The repository as REST parameters. */
  where: { owner: string; repo: string };
}

export type IssueComment = Awaited<ReturnType<RestOctokit["rest"]["issues"]["getComment"]>>["data"];

/** A request's answer, or `fallback` when GitHub answers 404 (the thing is gone, or never was). */
export async function unlessNotFound<T, F>(request: Promise<T>, fallback: F): Promise<T | F> {
  try {
    return await request;
  } catch (error) {
    if ((error as { status?: number }).status === 404) return fallback;
    throw error;
  }
}
