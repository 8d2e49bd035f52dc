import { execFile, spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { storedThreadState } from "../src/cli/local-port.js";
import { ThreadStore } from "../src/cli/thread-store.js";
import type { ThreadState } from "../src/workflow/state.js";

const execFileAsync = promisify(execFile);
const BIN = path.resolve(import.meta.dirname, "../bin/blueprint.js");

/** The process groups of the CLI runs in progress: they do not get the terminal's Ctrl-C, so the eval passes it on. */
const running = new Set<number>();

/** Kills every CLI run in progress with its process group (when the eval itself is interrupted). */
export function killRunningClis(): void {
  for (const pid of running) killGroup(pid);
  running.clear();
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

export interface CliRun {
  exitCode: number | null;
  seconds: number;
}

/**
 * Runs `node bin/blueprint.js …` in `cwd` as a person would, its output appended to `logFile`. The CLI
 * leads its own process group: when `signal` aborts (the task's time limit), the whole group is killed,
 * the commands the agent started included.
 */
export async function runBlueprint(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; logFile: string; signal?: AbortSignal | undefined },
): Promise<CliRun> {
  const started = performance.now();
  appendFileSync(
    options.logFile,
    `$ blueprint ${args.map((arg) => (arg.length > 60 ? `${JSON.stringify(arg.slice(0, 57))}…` : arg)).join(" ")}\n`,
  );
  if (options.signal?.aborted) return { exitCode: null, seconds: 0 };
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd,
    env: options.env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const pid = child.pid;
  if (pid !== undefined) running.add(pid);
  const onTimeLimit = () => {
    appendFileSync(options.logFile, "[time limit: killing the CLI's process group]\n");
    if (pid !== undefined) killGroup(pid);
  };
  options.signal?.addEventListener("abort", onTimeLimit, { once: true });
  child.stdout.on("data", (chunk: Buffer) => appendFileSync(options.logFile, chunk));
  child.stderr.on("data", (chunk: Buffer) => appendFileSync(options.logFile, chunk));
  const exitCode = await new Promise<number | null>((resolve) => {
    child.on("error", (error) => {
      appendFileSync(options.logFile, `${String(error)}\n`);
      resolve(null);
    });
    child.on("close", (code) => resolve(code));
  });
  options.signal?.removeEventListener("abort", onTimeLimit);
  if (pid !== undefined) running.delete(pid);
  appendFileSync(options.logFile, `[exit ${exitCode ?? "killed"}]\n\n`);
  return { exitCode, seconds: (performance.now() - started) / 1000 };
}

/** Where the checkout's current Blueprint thread stands, read from .git/blueprint like `blueprint status` does. */
export async function latestThreadState(checkout: string): Promise<ThreadState | null> {
  const store = new ThreadStore(path.join(checkout, ".git"));
  const thread = await store.current();
  if (!thread) return null;
  const lookup = storedThreadState(thread, store.seal(thread.number));
  return lookup.kind === "found" ? lookup.latest.state : null;
}

export async function git(cwd: string, args: string[]): Promise<string> {
  const identity = [
    "-c",
    "user.name=Blueprint eval",
    "-c",
    "user.email=eval@blueprint.invalid",
    "-c",
    "commit.gpgsign=false",
  ];
  const { stdout } = await execFileAsync("git", [...identity, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: cwd, GIT_CONFIG_NOSYSTEM: "1" },
  });
  return stdout;
}
