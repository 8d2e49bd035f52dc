import { copyFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { createCommandRunner, type CommandRunner } from "../src/workspace/command-runner.js";
import type { EvalSandbox } from "./sandbox.js";

/**
 * A smoke task's hidden check: its files (`name` is the path under `.eval-check/`) and the argv run from the tree's
 * root.
 */
export interface HiddenCheck {
  command: string[];
  files: Array<{ source: string; name: string }>;
}

export interface CheckResult {
  passed: boolean;
  exitCode: number | null;
  /** What the check printed (capped), for the report. */
  output: string;
  seconds: number;
  /** "bwrap" when the check ran inside bubblewrap. */
  isolation: "bwrap" | "plain";
}

const CHECK_TIMEOUT_MS = 60_000;
const runners = new Map<string | null, CommandRunner>();

/**
 * The engine's own command runner: the checked code is whatever the agent wrote, so it runs like the agent's
 * commands do, with a scrubbed environment, a timeout, and inside bubblewrap unless the eval's
 * sandbox choice (sandbox.ts) is to run plainly.
 */
export function checkRunner(sandbox: EvalSandbox): CommandRunner {
  const existing = runners.get(sandbox.bwrap);
  if (existing) return existing;
  const runner = createCommandRunner({ bwrapPath: sandbox.bwrap, outputCapBytes: 4_000 });
  runners.set(sandbox.bwrap, runner);
  return runner;
}

/** Copies the hidden check's files into `tree` (as `.eval-check/`) and runs its command there. */
export async function runHiddenCheck(
  check: HiddenCheck,
  tree: string,
  runner: CommandRunner,
  limit: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<CheckResult> {
  for (const file of check.files) {
    const target = path.join(tree, ".eval-check", file.name);
    mkdirSync(path.dirname(target), { recursive: true });
    copyFileSync(file.source, target);
  }
  const timeoutMs = Math.min(CHECK_TIMEOUT_MS, limit.timeoutMs ?? CHECK_TIMEOUT_MS);
  const result = await runner.run(check.command.map(shellWord).join(" "), {
    cwd: tree,
    timeoutMs,
    ...(limit.signal ? { signal: limit.signal } : {}),
  });
  return {
    passed: result.exitCode === 0 && !result.timedOut,
    exitCode: result.exitCode,
    output: result.output.trim(),
    seconds: result.durationMs / 1000,
    isolation: runner.isolation,
  };
}

function shellWord(word: string): string {
  return /^[\w./=-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
