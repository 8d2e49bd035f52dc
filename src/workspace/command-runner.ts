import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";

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
  /** Path of the bubblewrap binary: commands then see the system read-only and only the workspace writable. */
  bwrapPath?: string | null;
}

/** Runs shell commands in their own process group, with a scrubbed environment, a timeout and an output cap. */
export function createCommandRunner(options: CommandRunnerOptions = {}): CommandRunner {
  const defaultTimeoutMs = options.defaultTimeoutMs ?? 120_000;
  const maxTimeoutMs = options.maxTimeoutMs ?? 600_000;
  const cap = options.outputCapBytes ?? 30_000;
  const env = options.env ?? scrubbedEnv();
  const bwrap = options.bwrapPath ?? null;
  return {
    isolation: bwrap ? "bwrap" : "plain",
    run(command, { cwd, timeoutMs, network = false, signal }) {
      const limit = Math.min(Math.max(timeoutMs ?? defaultTimeoutMs, 1000), maxTimeoutMs);
      const started = Date.now();
      const [file, args] = bwrap ? [bwrap, [...sandboxArgs(cwd, network), "/bin/bash", "-c", command]] : ["/bin/bash", ["-c", command]];
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

/** The system read-only, the workspace writable, a private /tmp, no network unless allowed. */
function sandboxArgs(workspace: string, network: boolean): string[] {
  const gitDir = linkedGitDir(workspace);
  return [
    "--ro-bind", "/", "/",
    "--dev", "/dev",
    "--proc", "/proc",
    "--tmpfs", "/tmp",
    // A worktree's repository lives outside it: readable (git log/diff work), never writable.
    ...(gitDir ? ["--ro-bind", gitDir, gitDir] : []),
    "--bind", workspace, workspace,
    ...(network ? [] : ["--unshare-net"]),
    "--unshare-pid",
    "--die-with-parent",
    "--new-session",
    "--chdir", workspace,
  ];
}

/** For a linked worktree, the repository directory its `.git` file points into. */
function linkedGitDir(workspace: string): string | null {
  try {
    const pointer = readFileSync(path.join(workspace, ".git"), "utf8");
    const target = /^gitdir: (.+)$/m.exec(pointer)?.[1]?.trim();
    if (!target) return null;
    const absolute = path.resolve(workspace, target);
    const marker = `${path.sep}worktrees${path.sep}`;
    return absolute.includes(marker) ? absolute.slice(0, absolute.lastIndexOf(marker)) : absolute;
  } catch {
    return null;
  }
}

/** Finds bubblewrap on PATH (or at an explicit path); null when it is missing or cannot start here. */
export function findBubblewrap(explicit?: string): string | null {
  const candidates = explicit ? [explicit] : (process.env.PATH ?? "").split(":").filter(Boolean).map((dir) => `${dir}/bwrap`);
  for (const candidate of candidates) {
    const probe = spawnSync(candidate, ["--ro-bind", "/", "/", "--unshare-net", "/bin/true"], { stdio: "ignore", timeout: 5000 });
    if (probe.status === 0) return candidate;
  }
  return null;
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
