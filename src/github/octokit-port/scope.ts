import type { Octokit as RestOctokit } from "@octokit/rest";
import type { PortOctokit } from "../octokit-port.js";
import type { RepositoryInfo } from "../../workflow/ports.js";

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
