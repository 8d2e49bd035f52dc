import { runProcess } from "../workspace/process-pool.js";

export interface GitOutput {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a read-only git command in the workspace without a shell; never throws on a non-zero exit. */
export async function gitRead(root: string, args: string[], maxBuffer = 16 * 1024 * 1024): Promise<GitOutput> {
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", GIT_TERMINAL_PROMPT: "0", GIT_NO_LAZY_FETCH: "1" };
  const result = await runProcess("git", args, { cwd: root, env, maxBuffer });
  return { code: result.code ?? 1, stdout: result.stdout, stderr: result.stderr || (result.failure ?? "") };
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

/** Git's own test for binary content: a NUL byte in the first 8000 bytes. */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8000).includes(0);
}
