import { spawn } from "node:child_process";

export interface CommandResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** stdout and stderr interleaved, capped with head and tail kept. */
  output: string;
  durationMs: number;
}

export interface CommandRunner {
  run(command: string, options: { cwd: string; timeoutMs?: number }): Promise<CommandResult>;
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
}

/** Runs shell commands in their own process group, with a scrubbed environment, a timeout and an output cap. */
export function createCommandRunner(options: CommandRunnerOptions = {}): CommandRunner {
  const defaultTimeoutMs = options.defaultTimeoutMs ?? 120_000;
  const maxTimeoutMs = options.maxTimeoutMs ?? 600_000;
  const cap = options.outputCapBytes ?? 30_000;
  const env = options.env ?? scrubbedEnv();
  return {
    run(command, { cwd, timeoutMs }) {
      const limit = Math.min(Math.max(timeoutMs ?? defaultTimeoutMs, 1000), maxTimeoutMs);
      const started = Date.now();
      return new Promise((resolve) => {
        const child = spawn("/bin/bash", ["-c", command], { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
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
        child.stdout.on("data", (chunk: Buffer) => output.push(chunk));
        child.stderr.on("data", (chunk: Buffer) => output.push(chunk));
        child.on("error", (error) => output.push(Buffer.from(`\n${error.message}\n`)));
        // "exit", not "close": a background process left holding stdout would otherwise keep us waiting.
        child.on("exit", (code, signal) => {
          clearTimeout(timer);
          // Background processes the command left behind must not outlive it.
          killGroup();
          const finish = () => resolve({ exitCode: code, signal, timedOut, output: output.text(), durationMs: Date.now() - started });
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
