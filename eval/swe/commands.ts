import { existsSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { checkBubblewrap, createCommandRunner, type CommandRunner } from "../../src/workspace/command-runner.js";
import type { SweInstance, TestRunner } from "./instance.js";
import { parseTestLog, type TestResults } from "./parse-test-log.js";

export interface CommandOptions {
  timeoutMs: number;
  signal?: AbortSignal;
}

const LOG_CAP_BYTES = 200_000;

/**
 * Installing runs upstream's locked dependencies on the pristine checkout (before any agent
 * touched it), so it runs outside the sandbox, with the network and the user's npm cache, but with
 * the engine's scrubbed environment (no tokens or keys).
 */
const installRunner = createCommandRunner({ outputCapBytes: LOG_CAP_BYTES, maxTimeoutMs: 3_600_000 });

let testRunner: CommandRunner | undefined;
/**
 * Tests run the agent's code: inside bubblewrap without network where it can start (as the hidden
 * checks do), plainly otherwise.
 */
function sandboxedRunner(): CommandRunner {
  if (!testRunner) {
    const bubblewrap = checkBubblewrap();
    testRunner = createCommandRunner({ bwrapPath: "path" in bubblewrap ? bubblewrap.path : null, outputCapBytes: LOG_CAP_BYTES, maxTimeoutMs: 3_600_000 });
  }
  return testRunner;
}

/** The instance's `install`, else `npm ci` with a lockfile and `npm install` without one. */
export function installCommand(inst: SweInstance, dir: string): string {
  if (inst.install) return inst.install;
  const locked = existsSync(path.join(dir, "package-lock.json")) || existsSync(path.join(dir, "npm-shrinkwrap.json"));
  return locked ? "npm ci --no-audit --no-fund" : "npm install --no-audit --no-fund";
}

export async function installDependencies(inst: SweInstance, dir: string, opts: CommandOptions): Promise<{ ok: boolean; log: string }> {
  const command = installCommand(inst, dir);
  const result = await installRunner.run(command, { cwd: dir, timeoutMs: opts.timeoutMs, signal: opts.signal });
  const verdict = result.timedOut ? `timed out after ${opts.timeoutMs} ms` : opts.signal?.aborted ? "stopped" : `exit ${result.exitCode}`;
  return { ok: result.exitCode === 0 && !result.timedOut && !opts.signal?.aborted, log: `$ ${command}\n${result.output}\n[${verdict}, ${result.durationMs} ms]` };
}

export interface TestRun {
  results: TestResults;
  /** The command, what it printed on stderr (and stdout when parsing failed), and how it ended. */
  log: string;
  /** Set when no results could be read (timeout, crash before the reporter printed, unknown runner). */
  error?: string;
}

/** The instance's `test_cmd`, else what package.json suggests for its runner (see README). */
export function testCommand(inst: SweInstance, dir: string): { command: string; runner: TestRunner } {
  const runner = inst.test_runner ?? inferRunner(dir);
  if (inst.test_cmd) return { command: inst.test_cmd, runner };
  const files = (inst.test_files ?? []).map((file) => `'${file.replace(/'/g, `'\\''`)}'`).join(" ");
  const commands: Record<TestRunner, string> = {
    mocha: `node_modules/.bin/_mocha --reporter json ${files || "test/"}`,
    jest: `node_modules/.bin/jest --json ${files}`,
    vitest: `node_modules/.bin/vitest run --reporter=json ${files}`,
    "node-test": `node --test --test-reporter=tap ${files}`,
    tap: `node_modules/.bin/tap --reporter=tap ${files}`,
  };
  return { command: commands[runner].trim(), runner };
}

function inferRunner(dir: string): TestRunner {
  const manifest = path.join(dir, "package.json");
  const text = existsSync(manifest) ? readFileSync(manifest, "utf8") : "";
  for (const runner of ["vitest", "jest", "mocha", "tap"] as const) {
    if (new RegExp(`"${runner}"\\s*:`).test(text)) return runner;
  }
  return "node-test";
}

/** Runs the tests in `dir` (sandboxed) and parses the reporter's stdout. */
export async function runTests(inst: SweInstance, dir: string, opts: CommandOptions, runner: CommandRunner = sandboxedRunner()): Promise<TestRun> {
  const { command, runner: testRunnerName } = testCommand(inst, dir);
  // stdout goes to a file so that the reporter's JSON is not interleaved with stderr.
  const stdoutFile = path.join(dir, ".swe-test-stdout");
  const result = await runner.run(`(${command}) > .swe-test-stdout`, { cwd: dir, timeoutMs: opts.timeoutMs, signal: opts.signal });
  const stdout = existsSync(stdoutFile) ? readFileSync(stdoutFile, "utf8") : "";
  rmSync(stdoutFile, { force: true });
  const ending = result.timedOut ? `timed out after ${opts.timeoutMs} ms` : opts.signal?.aborted ? "stopped" : `exit ${result.exitCode}`;
  const log = `$ ${command}\n${result.output}\n[${ending}, ${result.durationMs} ms]`;
  if (result.timedOut || opts.signal?.aborted) return { results: new Map(), log: `${log}\n${tail(stdout)}`, error: `the tests ${ending}` };
  try {
    return { results: parseTestLog(testRunnerName, stdout, dir), log };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { results: new Map(), log: `${log}\n--- stdout ---\n${tail(stdout)}`, error: message };
  }
}

function tail(text: string, max = 20_000): string {
  return text.length > max ? `[… ${text.length - max} characters cut]\n${text.slice(-max)}` : text;
}
