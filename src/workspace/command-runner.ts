import { spawn } from "node:child_process";
import { plainLaunch, sandboxedLaunch, SCRATCH_VARIABLE, supportsDisableUserns } from "./bubblewrap.js";
import { OFFLINE, type JobNetwork } from "./egress-proxy.js";
import { NETWORK_NOT_READY_EXIT, withProxy } from "./sandbox-bridge.js";

// Whether bubblewrap can sandbox commands here decides a runner's isolation: callers ask it beside the runner.
export { checkBubblewrap } from "./bubblewrap.js";

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
  /**
   * The job's network (egress-proxy.ts): without one, or offline, a sandboxed command has only its
   * own namespace's loopback. It never gets the host's network.
   */
  network?: JobNetwork;
  /** Stops the command early (e.g. `/cancel`). */
  signal?: AbortSignal;
  /**
   * A directory outside the worktree that lasts between commands (a build step's), named in $BLUEPRINT_SCRATCH; /tmp
   * does not last.
   */
  scratch?: string | undefined;
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

/**
 * The allow-listed part of `source` for an agent command. Reading process.env here is a process fact
 * handed to a child (PATH, locale, toolchain homes), not configuration: nothing of Blueprint's own passes.
 */
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
  /**
   * Paths the sandbox hides, directories or files (default: the App's working directory, where its
   * `.env` lives). The App adds its work directory and private key (create-deps.ts).
   */
  hide?: readonly string[];
  /** The Node binary the sandbox bridge runs on (default: this process's). */
  nodePath?: string;
}

/** Runs shell commands in their own process group, with a scrubbed environment, a timeout and an output cap. */
export function createCommandRunner(options: CommandRunnerOptions = {}): CommandRunner {
  const defaultTimeoutMs = options.defaultTimeoutMs ?? 120_000;
  const maxTimeoutMs = options.maxTimeoutMs ?? 600_000;
  const cap = options.outputCapBytes ?? 30_000;
  const env = options.env ?? scrubbedEnv();
  const bwrap = options.bwrapPath ?? null;
  const hide = options.hide ?? [process.cwd()];
  const disableUserns = bwrap ? supportsDisableUserns(bwrap) : false;
  const nodePath = options.nodePath ?? process.execPath;
  return {
    isolation: bwrap ? "bwrap" : "plain",
    run(command, { cwd, timeoutMs, network = OFFLINE, signal, scratch }) {
      const limit = Math.min(Math.max(timeoutMs ?? defaultTimeoutMs, 1000), maxTimeoutMs);
      const started = Date.now();
      const launch = bwrap
        ? sandboxedLaunch(bwrap, command, cwd, network, { hide, disableUserns, nodePath, scratch })
        : plainLaunch(command, network);
      if ("problem" in launch)
        return Promise.resolve({
          exitCode: NETWORK_NOT_READY_EXIT,
          signal: null,
          timedOut: false,
          output: `${launch.problem}\n`,
          durationMs: 0,
        });
      const { file, args, proxy } = launch;
      return new Promise((resolve) => {
        const commandEnv = scratch ? { ...withProxy(env, proxy), [SCRATCH_VARIABLE]: scratch } : withProxy(env, proxy);
        const child = spawn(file, args, { cwd, env: commandEnv, detached: true, stdio: ["ignore", "pipe", "pipe"] });
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
          const finish = () =>
            resolve({
              exitCode: code,
              signal: exitSignal,
              timedOut,
              output: output.text(),
              durationMs: Date.now() - started,
            });
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
