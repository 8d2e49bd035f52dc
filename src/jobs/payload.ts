import type { Job } from "./job.js";

/** What the intake reads of GitHub's webhook payloads, whichever event brings them. */

export interface PayloadRepository {
  name: string;
  owner: { login: string };
  clone_url: string;
  default_branch: string;
  html_url: string;
}

export interface PayloadUser {
  login: string;
  type?: string | undefined;
}

export interface Accepted {
  job: Job;
  /**
   * Claimed once: the delivery id and what it is about, so a redelivery or a second delivery of one comment starts
   * nothing.
   */
  keys: string[];
}

/** An App's account: typed Bot, or named `…[bot]` (a name no person's account can have). */
export const isBot = (user: PayloadUser): boolean => user.type === "Bot" || user.login.endsWith("[bot]");

export const repositoryOf = (repository: PayloadRepository) => ({
  owner: repository.owner.login,
  name: repository.name,
  cloneUrl: repository.clone_url,
  defaultBranch: repository.default_branch,
  htmlUrl: repository.html_url,
});
