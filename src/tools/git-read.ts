import { findNestedGit, NestedRepositoryError } from "../workspace/nested-git.js";
import { excludeFileOf, recordedGitDir, untrustedGit } from "../workspace/untrusted-git.js";

export interface GitOutput {
  code: number;
  stdout: string;
  stderr: string;
  /** Git printed more than the call's `maxOutputBytes` and was stopped: `stdout` is its first part. */
  truncated?: boolean;
}

/**
 * Runs a read-only git command in the workspace (untrusted-git.ts: the git directory Blueprint
 * recorded for the worktree, no hooks or drivers, no lazy fetches); never throws on a non-zero exit.
 * In a Blueprint worktree it first looks for a nested repository (nested-git.ts): with one there
 * no git runs, and the failure tells the agent which `.git` to delete before its step can be committed.
 */
export async function gitRead(
  root: string,
  args: string[],
  options: { maxOutputBytes?: number } = {},
): Promise<GitOutput> {
  const gitDir = recordedGitDir(root);
  const nested = gitDir ? await findNestedGit(root) : null;
  if (nested) return { code: 128, stdout: "", stderr: new NestedRepositoryError(nested).message };
  // A Blueprint worktree's own exclude file hides setup output (node_modules…) from the tools too.
  const git = untrustedGit(gitDir ? { gitDir, workTree: root } : { discoverFrom: root }, {
    lazyFetch: false,
    excludesFile: gitDir ? excludeFileOf(gitDir) : undefined,
    ...(options.maxOutputBytes ? { maxOutputBytes: options.maxOutputBytes } : {}),
  });
  const result = await git.run(args);
  return {
    code: result.code ?? 1,
    stdout: result.stdout,
    stderr: result.stderr,
    ...(result.truncated ? { truncated: true } : {}),
  };
}

/** A git pathspec for a directory prefix and an optional glob; a glob without a slash matches at any depth. */
export function toPathspec(prefix: string, glob: string | null | undefined): string {
  if (!glob) return `:(top)${prefix}`;
  const trimmed = glob.replace(/^\/+/, "");
  const anyDepth = trimmed.startsWith("**") || trimmed.includes("/") ? trimmed : `**/${trimmed}`;
  return `:(top,glob)${prefix}${anyDepth}`;
}

/** Why a git call failed, in git's words (its first line), for a tool error. */
export function gitFailure(result: GitOutput, command: string): string {
  return result.stderr.trim().split("\n")[0] || `git ${command} exited ${result.code}`;
}
