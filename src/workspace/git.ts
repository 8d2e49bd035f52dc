import os from "node:os";
import { simpleGit, type SimpleGit } from "simple-git";

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

export function git(baseDir: string, env: Record<string, string>): SimpleGit {
  // simple-git guards sensitive variables; these are ours, set on purpose.
  return simpleGit({
    baseDir,
    allowEnvironment: Object.keys(env),
    unsafe: { allowUnsafeConfigEnvCount: true, allowUnsafeConfigPaths: true },
  }).env(env);
}

/** A failure to reach or update the repository, worded for the issue thread. */
export class WorkspaceError extends Error {}

export function describeGitError(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const line = text.split("\n").map((l) => l.trim()).find((l) => /^(fatal|error|remote):/i.test(l)) ?? text.split("\n")[0] ?? text;
  return line.replace(/Authorization: \S+ \S+/g, "Authorization: [redacted]");
}
