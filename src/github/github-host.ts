import type { Job } from "../jobs/job.js";
import type { RepositoryInfo } from "../workflow/ports.js";

/** The App's GitHub web host from Probot's own variables: github.com, a GitHub Enterprise Server, or a local double. */
export function githubWebUrl(env: { GHE_HOST?: string | undefined; GHE_PROTOCOL: string }): string {
  return env.GHE_HOST ? `${env.GHE_PROTOCOL}://${env.GHE_HOST}` : "https://github.com";
}

/**
 * A job's repository on the App's own GitHub: its clone and web URLs made from the configured host and
 * the repository's full name, never read from the job, so a job written into a shared queue cannot
 * send git (and the token git carries) anywhere else.
 */
export function repositoryOnHost(
  webUrl: string,
  repository: Pick<Job["repository"], "owner" | "name" | "defaultBranch">,
): RepositoryInfo {
  const htmlUrl = `${webUrl}/${repository.owner}/${repository.name}`;
  return {
    owner: repository.owner,
    name: repository.name,
    defaultBranch: repository.defaultBranch,
    htmlUrl,
    cloneUrl: `${htmlUrl}.git`,
  };
}

/**
 * Whether a webhook's `repository.clone_url` is the one the App derives for that repository. GitHub
 * sends it; a difference means the App is configured for another GitHub (GHE_HOST, GHE_PROTOCOL).
 */
export function cloneUrlOnHost(
  webUrl: string,
  repository: Pick<Job["repository"], "owner" | "name" | "defaultBranch" | "cloneUrl">,
): boolean {
  const expected = repositoryOnHost(webUrl, repository).cloneUrl;
  try {
    const given = new URL(repository.cloneUrl);
    const wanted = new URL(expected);
    // Host names and GitHub's repository paths are case-insensitive.
    return (
      given.protocol === wanted.protocol &&
      given.host === wanted.host &&
      given.pathname.toLowerCase() === wanted.pathname.toLowerCase() &&
      given.username === "" &&
      given.password === ""
    );
  } catch {
    return false;
  }
}
