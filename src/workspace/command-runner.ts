import { spawn, spawnSync } from "node:child_process";
import { lstatSync, mkdtempSync, readlinkSync, rmSync, type Stats } from "node:fs";
import os from "node:os";
import path from "node:path";
import { commonDirOf, recordedGitDir } from "./untrusted-git.js";

export interface CommandResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** stdout and stderr interleaved, capped with head and tail kept. */
  output: string;
  durationMs: number;
}

export interface RunOptions {
  cwd: string;
  timeoutMs?: number;
  /** Inside the sandbox: allow network access (repository opt-in). */
  network?: boolean;
  /** Stops the command early (e.g. `/cancel`). */
  signal?: AbortSignal;
}

export interface CommandRunner {
  /** "bwrap" when commands run inside bubblewrap, "plain" otherwise. */
  readonly isolation: "bwrap" | "plain";
  run(command: string, options: RunOptions): Promise<CommandResult>;
}

/** Variables a command may inherit; everything else (tokens, keys, secrets) is dropped. */
export const ENV_ALLOW_LIST = [
  "PATH",
  "HOME",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TZ",
  "TERM",
  "TMPDIR",
  "USER",
  "SHELL",
  "NODE_VERSION",
  "JAVA_HOME",
  "GOPATH",
  "GOROOT",
  "CARGO_HOME",
  "RUSTUP_HOME",
  "PYENV_ROOT",
  "VIRTUAL_ENV",
];

export function scrubbedEnv(source: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of ENV_ALLOW_LIST) {
    const value = source[name];
    if (value !== undefined) env[name] = value;
  }
  env.CI = "true";
  env.GIT_TERMINAL_PROMPT = "0";
  return env;
}

export interface CommandRunnerOptions {
  defaultTimeoutMs?: number;
  maxTimeoutMs?: number;
  outputCapBytes?: number;
  env?: NodeJS.ProcessEnv;
  /** Path of the bubblewrap binary: commands then run inside the sandbox (sandboxArgs). */
  bwrapPath?: string | null;
  /** Directories the sandbox hides (default: the App's working directory, where its `.env` lives). */
  hide?: readonly string[];
}

/** Runs shell commands in their own process group, with a scrubbed environment, a timeout and an output cap. */
export function createCommandRunner(options: CommandRunnerOptions = {}): CommandRunner {
  const defaultTimeoutMs = options.defaultTimeoutMs ?? 120_000;
  const maxTimeoutMs = options.maxTimeoutMs ?? 600_000;
  const cap = options.outputCapBytes ?? 30_000;
  const env = options.env ?? scrubbedEnv();
  const bwrap = options.bwrapPath ?? null;
  const hide = options.hide ?? [process.cwd()];
  return {
    isolation: bwrap ? "bwrap" : "plain",
    run(command, { cwd, timeoutMs, network = false, signal }) {
      const limit = Math.min(Math.max(timeoutMs ?? defaultTimeoutMs, 1000), maxTimeoutMs);
      const started = Date.now();
      const [file, args] = bwrap ? [bwrap, [...sandboxArgs(cwd, { network, hide }), "/bin/bash", "-c", command]] : ["/bin/bash", ["-c", command]];
      return new Promise((resolve) => {
        const child = spawn(file, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
        const output = new CappedOutput(cap);
        let timedOut = false;
        const killGroup = () => {
          if (child.pid === undefined) return;
          try {
            process.kill(-child.pid, "SIGKILL");
          } catch {
            // the group is already gone
          }
        };
        const timer = setTimeout(() => {
          timedOut = true;
          killGroup();
        }, limit);
        const onAbort = () => {
          output.push(Buffer.from("\n[stopped: the job was cancelled]\n"));
          killGroup();
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        if (signal?.aborted) onAbort();
        child.stdout.on("data", (chunk: Buffer) => output.push(chunk));
        child.stderr.on("data", (chunk: Buffer) => output.push(chunk));
        child.on("error", (error) => output.push(Buffer.from(`\n${error.message}\n`)));
        // "exit", not "close": a background process left holding stdout would otherwise keep us waiting.
        child.on("exit", (code, exitSignal) => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          // Background processes the command left behind must not outlive it.
          killGroup();
          const finish = () => resolve({ exitCode: code, signal: exitSignal, timedOut, output: output.text(), durationMs: Date.now() - started });
          // Let the pipes drain what was already written, but never wait long for them.
          const drained = setTimeout(finish, 200);
          child.once("close", () => {
            clearTimeout(drained);
            finish();
          });
        });
      });
    },
  };
}

/** System directories a sandboxed command may read, where they exist: programs, libraries, /etc. */
const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"];

interface SandboxOptions {
  network: boolean;
  /** Directories hidden even when they lie inside a system directory (the App's own, say). */
  hide: readonly string[];
}

/**
 * What a sandboxed command sees: the system directories read-only, its own worktree writable,
 * a private /tmp and HOME, a new /proc with only its own processes, no network unless allowed.
 * Nothing else under the host's file system: no other workspace, mirror or installation, no App
 * directory or `.env`. A worktree Blueprint created also gets its repository read-only (so the
 * agent's `git log` works), found from Blueprint's record, never from the worktree's `.git` file,
 * and without the other worktrees' admin directories.
 */
function sandboxArgs(workspace: string, options: SandboxOptions): string[] {
  const args: string[] = [];
  const exposed: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    const stat = lstatOrNull(dir);
    if (stat?.isSymbolicLink()) args.push("--symlink", readlinkSync(dir), dir);
    else if (stat?.isDirectory()) {
      args.push("--ro-bind", dir, dir);
      exposed.push(dir);
    }
  }
  for (const dir of options.hide) {
    const inside = exposed.some((root) => dir === root || dir.startsWith(`${root}/`));
    if (inside && lstatOrNull(dir)?.isDirectory()) args.push("--tmpfs", dir);
  }
  // systemd-resolved hosts point /etc/resolv.conf here; commands allowed the network need it.
  if (options.network) args.push("--ro-bind-try", "/run/systemd/resolve", "/run/systemd/resolve");
  args.push("--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--dir", "/tmp/home");
  const gitDir = recordedGitDir(workspace);
  if (gitDir) {
    const common = commonDirOf(gitDir);
    args.push("--ro-bind", common, common);
    if (common !== gitDir) args.push("--tmpfs", path.join(common, "worktrees"), "--ro-bind", gitDir, gitDir);
  }
  args.push(
    "--bind", workspace, workspace,
    "--unshare-all",
    ...(options.network ? ["--share-net"] : []),
    "--cap-drop", "ALL",
    "--die-with-parent",
    "--new-session",
    "--setenv", "HOME", "/tmp/home",
    "--setenv", "TMPDIR", "/tmp",
    "--chdir", workspace,
  );
  return args;
}

function lstatOrNull(file: string): Stats | null {
  try {
    return lstatSync(file);
  } catch {
    return null;
  }
}

/** bubblewrap, where it can build the real sandbox here; otherwise why not, in words an operator can act on. */
export function checkBubblewrap(explicit?: string): { path: string } | { problem: string } {
  const candidates = explicit ? [explicit] : (process.env.PATH ?? "").split(":").filter(Boolean).map((dir) => `${dir}/bwrap`);
  const found = candidates.filter((candidate) => lstatOrNull(candidate) !== null);
  if (found.length === 0) return { problem: "bubblewrap (`bwrap`) is not installed (not on PATH)" };
  const probeDir = mkdtempSync(path.join(os.tmpdir(), "blueprint-sandbox-probe-"));
  const problems: string[] = [];
  try {
    for (const candidate of found) {
      const probe = spawnSync(candidate, [...sandboxArgs(probeDir, { network: false, hide: [] }), "/bin/true"], { encoding: "utf8", timeout: 5000 });
      if (probe.status === 0) return { path: candidate };
      problems.push(`${candidate}: ${(probe.stderr || probe.error?.message || `exit ${probe.status ?? "killed"}`).trim()}`);
    }
  } finally {
    rmSync(probeDir, { recursive: true, force: true });
  }
  return { problem: `bubblewrap cannot build the sandbox here (${problems.join("; ")})` };
}

/** Keeps the first and last halves of a stream once it outgrows the cap. */
export class CappedOutput {
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer = Buffer.alloc(0);
  private dropped = 0;

  constructor(private readonly cap: number) {}

  push(chunk: Buffer): void {
    const half = Math.floor(this.cap / 2);
    if (this.headBytes < half) {
      const take = chunk.subarray(0, half - this.headBytes);
      this.head.push(take);
      this.headBytes += take.length;
      chunk = chunk.subarray(take.length);
    }
    if (chunk.length === 0) return;
    const combined = Buffer.concat([this.tail, chunk]);
    const keep = combined.subarray(Math.max(0, combined.length - half));
    this.dropped += combined.length - keep.length;
    this.tail = Buffer.from(keep);
  }

  text(): string {
    const head = Buffer.concat(this.head).toString("utf8");
    const tail = this.tail.toString("utf8");
    if (this.dropped === 0) return head + tail;
    return `${head}\n… [${this.dropped} bytes of output omitted] …\n${tail}`;
  }
}

/** Keeps the head and tail of a long text (for tool results and comments). */
export function truncateMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n… [${text.length - 2 * half} characters omitted] …\n${text.slice(-half)}`;
}
