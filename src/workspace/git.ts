import os from "node:os";
import { runProcess } from "./process-pool.js";

export interface GitIdentity {
  name: string;
  email: string;
}

/**
 * Environment for one git call. The installation token travels as an HTTP header through
 * GIT_CONFIG_* variables, so it is never written to any config file on disk.
 */
export function gitEnv(token?: string | null, identity?: GitIdentity): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: os.tmpdir(),
    GIT_TERMINAL_PROMPT: "0",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "safe.directory",
    GIT_CONFIG_VALUE_0: "*",
  };
  if (token) {
    env.GIT_CONFIG_COUNT = "2";
    env.GIT_CONFIG_KEY_1 = "http.extraHeader";
    env.GIT_CONFIG_VALUE_1 = `Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`;
  }
  if (identity) {
    env.GIT_AUTHOR_NAME = identity.name;
    env.GIT_AUTHOR_EMAIL = identity.email;
    env.GIT_COMMITTER_NAME = identity.name;
    env.GIT_COMMITTER_EMAIL = identity.email;
  }
  return env;
}

export interface Git {
  /** Runs `git <args>` and resolves with its standard output; rejects with a GitError on failure. */
  raw(args: readonly string[]): Promise<string>;
}

/** A failed git call; the message is git's own (stderr), which describeGitError narrows down. */
export class GitError extends Error {
  constructor(
    message: string,
    readonly exitCode: number | null,
  ) {
    super(message);
  }
}

/**
 * git in `baseDir` with exactly `env` (nothing inherited). Calls run off the main thread
 * (process-pool.ts), so many jobs' git calls never stall webhook handling.
 */
export function git(baseDir: string, env: Record<string, string>): Git {
  return {
    async raw(args) {
      const result = await runProcess("git", args, { cwd: baseDir, env });
      if (result.code === 0) return result.stdout;
      const message = result.stderr.trim() || result.stdout.trim() || result.failure || `git ${args[0] ?? ""} exited with ${result.code}`;
      throw new GitError(message, result.code);
    },
  };
}

/** A failure to reach or update the repository, worded for the issue thread. */
export class WorkspaceError extends Error {}

export function describeGitError(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const line = text.split("\n").map((l) => l.trim()).find((l) => /^(fatal|error|remote):/i.test(l)) ?? text.split("\n")[0] ?? text;
  return line.replace(/Authorization: \S+ \S+/g, "Authorization: [redacted]");
}
