// Ablation 2026-11-28 (npm run bench ablate, load 5–14): a job's ten git calls 93–116 ms vs simple-git 4.0.2's 423–474.
import { spawn } from "node:child_process";
import { mkdtempSync, promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * Git on a tree the agent touched, treating everything in it as data.
 *
 * The agent can write any file in its worktree: a `.git` pointer to a git directory of its own,
 * `.gitattributes` naming filter drivers, config under HOME. None of it may make Blueprint's own
 * git run code as the App. So every call here:
 * - names the git directory Blueprint recorded when it created the worktree (never a `.git`
 *   file found in the tree) and the work tree explicitly;
 * - reads no system or global config and has an empty HOME, so only the mirror's own config
 *   (which commands see read-only) and the settings below count;
 * - turns hooks, fsmonitor, credential helpers, submodule recursion and the global attributes
 *   file off; the mirror's `info/attributes` (NO_DRIVERS_ATTRIBUTES) outranks any `.gitattributes`,
 *   so no filter, textconv or merge driver runs even if a config defined one;
 * - is never run over a tree with a nested repository in it (nested-git.ts): git would descend
 *   into it with that repository's own config, which no setting here fully overrides;
 * - carries a token only as an HTTP header in this one process's environment, for one host.
 * The sandbox (command-runner.ts) finds a worktree's repository through the same record.
 */

export interface GitIdentity {
  name: string;
  email: string;
}

export type GitLocation =
  /** A repository whose git directory Blueprint recorded itself (a mirror, or a worktree's admin dir). */
  | { gitDir: string; workTree?: string }
  /** The person's own checkout (the CLI): found the usual way from a directory, with the same settings. */
  | { discoverFrom: string };

export interface UntrustedGitOptions {
  /**
   * Installation token for fetch, push and a blobless clone's lazy blob fetches, sent only to the
   * clone URL's host (a rewritten remote URL does not get it).
   */
  auth?: { token: string | null | undefined; url: string } | null | undefined;
  /** Author and committer for commits (never a global identity). */
  identity?: GitIdentity | undefined;
  /** Fetch missing blobs on demand (default true); the read tools turn it off. */
  lazyFetch?: boolean;
  /**
   * An exclude file for this call only (`core.excludesFile`): a worktree's own list, kept outside
   * the tree; the mirror's `info/exclude` is shared by every worktree and never written.
   */
  excludesFile?: string | undefined;
  /**
   * The most of git's standard output read (DEFAULT_MAX_OUTPUT_BYTES): past it git is killed and the
   * result is marked `truncated`. A tree the agent wrote can make git print without end (a grep over
   * a 560 MiB file), and one string that long throws inside the process every job shares.
   */
  maxOutputBytes?: number;
}

export interface GitResult {
  /** git's exit code; null when it could not start or was killed. */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Git printed more than `maxOutputBytes`: it was killed, and `stdout` holds the first bytes only. */
  truncated?: boolean;
}

/** Enough for any diff or listing Blueprint reads; far below the longest string V8 can hold. */
export const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024 * 1024;
/** git's error output: its first lines say what went wrong. */
const MAX_STDERR_BYTES = 1024 * 1024;

export interface UntrustedGit {
  /** Runs `git <args>`; never rejects on a non-zero exit (the result says what happened). */
  run(args: readonly string[]): Promise<GitResult>;
  /** Runs `git <args>` and resolves with its standard output; rejects with a GitError on failure. */
  raw(args: readonly string[]): Promise<string>;
}

/** A failed git call; the message is git's own (stderr), which describeGitError narrows down. */
class GitError extends Error {
  constructor(
    message: string,
    readonly exitCode: number | null,
  ) {
    super(message);
  }
}

/** Settings on every call (`-c`): they outrank any repository or worktree config. */
export const HARDENED_CONFIG = [
  "core.hooksPath=/dev/null",
  "core.fsmonitor=false",
  "core.attributesFile=/dev/null",
  "credential.helper=",
  // Never descend into a nested repository on purpose (git would run it with its own config);
  // workspace.ts and repo-cache.ts make sure there is none before git meets the tree.
  "submodule.recurse=false",
  "diff.ignoreSubmodules=all",
  "diff.submodule=short",
  "status.submoduleSummary=false",
  "fetch.recurseSubmodules=false",
  "push.recurseSubmodules=no",
  "protocol.ext.allow=never",
];

let emptyHomeDir: string | null = null;

/** A HOME with nothing in it, so no `~/.gitconfig` or `~/.config/git` a command wrote applies. */
function emptyHome(): string {
  emptyHomeDir ??= mkdtempSync(path.join(os.tmpdir(), "blueprint-git-home-"));
  return emptyHomeDir;
}

function environment(location: GitLocation, options: UntrustedGitOptions): Record<string, string> {
  const env: Record<string, string> = {
    // A fact of this process handed to its child, not configuration: git and its helpers are found
    // where this process finds them (config/env.ts reads what an operator chooses).
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: emptyHome(),
    XDG_CONFIG_HOME: emptyHome(),
    LC_ALL: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_ATTR_NOSYSTEM: "1",
    GIT_TERMINAL_PROMPT: "0",
  };
  if ("gitDir" in location) {
    env.GIT_DIR = location.gitDir;
    if (location.workTree) env.GIT_WORK_TREE = location.workTree;
  }
  if (options.lazyFetch === false) env.GIT_NO_LAZY_FETCH = "1";
  const origin = options.auth?.token ? httpOrigin(options.auth.url) : null;
  if (options.auth?.token && origin) {
    // Only in this process's environment: never in argv (other users can read that) or a file.
    env.GIT_CONFIG_COUNT = "1";
    env.GIT_CONFIG_KEY_0 = `http.${origin}/.extraHeader`;
    env.GIT_CONFIG_VALUE_0 = `Authorization: Basic ${Buffer.from(`x-access-token:${options.auth.token}`).toString("base64")}`;
  }
  if (options.identity) {
    env.GIT_AUTHOR_NAME = options.identity.name;
    env.GIT_AUTHOR_EMAIL = options.identity.email;
    env.GIT_COMMITTER_NAME = options.identity.name;
    env.GIT_COMMITTER_EMAIL = options.identity.email;
  }
  return env;
}

function httpOrigin(url: string): string | null {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.origin : null;
  } catch {
    return null;
  }
}

/**
 * Attributes Blueprint puts in a mirror (`info/attributes` outranks every `.gitattributes`):
 * no filter, diff or merge driver is ever selected, whatever config might define one.
 */
export const NO_DRIVERS_ATTRIBUTES = "* !filter !diff !merge\n";

/**
 * Runs git itself rather than through simple-git (4.0.2), for three reasons:
 * - an output cap: simple-git keeps all of git's output, and a tree the agent wrote can make git print
 *   without end (see `maxOutputBytes`); it has no way to stop git past a size;
 * - speed: after a git process that printed nothing, simple-git waits 50 ms whatever its `completion`
 *   option says (`onExit`/`onClose` set when the process counts as done; the 50 ms come on top), and
 *   most of Blueprint's calls print nothing (`checkout --quiet`, a clean `status`, `update-ref`);
 * - the hardening: simple-git refuses `GIT_CONFIG_GLOBAL`, `core.hooksPath` and most settings below
 *   until one of its "unsafe" switches allows each, so its own guards would all be switched off here.
 */
export function untrustedGit(location: GitLocation, options: UntrustedGitOptions = {}): UntrustedGit {
  const cwd = "gitDir" in location ? (location.workTree ?? location.gitDir) : location.discoverFrom;
  const env = environment(location, options);
  const settings = options.excludesFile
    ? [...HARDENED_CONFIG, `core.excludesFile=${options.excludesFile}`]
    : HARDENED_CONFIG;
  const maxOutput = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const run = (args: readonly string[]): Promise<GitResult> =>
    new Promise((resolve) => {
      const child = spawn("git", [...settings.flatMap((setting) => ["-c", setting]), ...args], {
        cwd,
        env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      const stdout = new CappedBuffer(maxOutput);
      const stderr = new CappedBuffer(MAX_STDERR_BYTES);
      child.stdout.on("data", (chunk: Buffer) => {
        if (!stdout.push(chunk)) child.kill("SIGKILL");
      });
      child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
      child.on("error", (error) => resolve({ code: null, stdout: "", stderr: error.message }));
      child.on("close", (code) => {
        // Nothing thrown in this listener may escape: it would end the process every job shares.
        try {
          const text = stdout.text();
          resolve(
            stdout.full
              ? { code: null, stdout: text, stderr: stderr.text(), truncated: true }
              : { code, stdout: text, stderr: stderr.text() },
          );
        } catch (error) {
          resolve({ code: null, stdout: "", stderr: `git's output could not be read: ${(error as Error).message}` });
        }
      });
    });
  return {
    run,
    async raw(args) {
      const result = await run(args);
      if (result.truncated)
        throw new GitError(`git ${args[0] ?? ""} printed more than ${maxOutput} bytes and was stopped`, null);
      if (result.code === 0) return result.stdout;
      throw new GitError(
        result.stderr.trim() || `git ${args[0] ?? ""} exited with ${result.code ?? "no code"}`,
        result.code,
      );
    },
  };
}

/** Chunks up to a limit: `push` answers false once the limit is reached (the rest is dropped). */
class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  full = false;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): boolean {
    if (this.full) return false;
    const room = this.limit - this.bytes;
    if (chunk.length > room) {
      this.chunks.push(chunk.subarray(0, room));
      this.bytes = this.limit;
      this.full = true;
      return false;
    }
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    return true;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString("utf8");
  }
}

/**
 * Which of `files` are files (blobs) in `ref`'s tree, in one git process however many are asked: a caller that looks
 * for files that are mostly absent (instruction files in each directory of a plan's paths) then runs `git show` only
 * for those there. Paths are taken literally (no pathspec magic in a name a model wrote); none there, or an unknown
 * ref: an empty set.
 */
export async function filesAt(git: UntrustedGit, ref: string, files: readonly string[]): Promise<Set<string>> {
  if (files.length === 0) return new Set();
  try {
    const listed = await git.raw(["--literal-pathspecs", "ls-tree", "-z", "--full-tree", ref, "--", ...files]);
    return new Set(
      listed.split("\0").flatMap((entry) => {
        const found = /^\d+ blob \S+\t([^]*)$/.exec(entry);
        return found?.[1] !== undefined ? [found[1]] : [];
      }),
    );
  } catch {
    return new Set();
  }
}

/** A worktree's own exclude file, in its admin directory inside the mirror (Blueprint's, not the tree's). */
export function excludeFileOf(gitDir: string): string {
  return path.join(gitDir, "blueprint-exclude");
}

/**
 * A path as a gitignore pattern that matches only that path, anchored at the top: `\`, `*`, `?`,
 * `[`, `]`, `!` and `#` escaped, trailing spaces kept. A name with a line break cannot be written
 * as one line: null.
 */
export function literalIgnorePattern(entry: string): string | null {
  if (/[\n\r]/.test(entry)) return null;
  const escaped = entry
    .replace(/[\\*?[\]!#]/g, (char) => `\\${char}`)
    .replace(/ +$/, (spaces) => spaces.replace(/ /g, "\\ "));
  return `/${escaped}`;
}

/** Worktrees Blueprint created, and the admin directory inside the mirror each one belongs to. */
const recorded = new Map<string, string>();

export function recordWorktree(workTree: string, gitDir: string): void {
  recorded.set(path.resolve(workTree), gitDir);
}

export function forgetWorktree(workTree: string): void {
  recorded.delete(path.resolve(workTree));
}

/** The git directory Blueprint recorded for a worktree it created; null for any other directory. */
export function recordedGitDir(workTree: string): string | null {
  return recorded.get(path.resolve(workTree)) ?? null;
}

/** The repository a worktree's admin directory belongs to (`<mirror>/worktrees/<name>` → `<mirror>`). */
export function commonDirOf(gitDir: string): string {
  const parent = path.dirname(gitDir);
  return path.basename(parent) === "worktrees" ? path.dirname(parent) : gitDir;
}

/**
 * Puts back the `.git` pointer Blueprint wrote if anything changed it (rewritten, replaced by a
 * directory, removed). Blueprint's own git never reads it; the agent's next `git log` does.
 * Returns true when it had to be restored.
 */
export async function restoreGitPointer(workTree: string, gitDir: string): Promise<boolean> {
  const file = path.join(workTree, ".git");
  const expected = `gitdir: ${gitDir}\n`;
  const stat = await fs.lstat(file).catch(() => null);
  if (stat?.isFile() && (await fs.readFile(file, "utf8")) === expected) return false;
  await fs.rm(file, { recursive: true, force: true });
  await fs.writeFile(file, expected);
  return true;
}
