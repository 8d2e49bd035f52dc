import { existsSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { createCommandRunner, type CommandRunner } from "../../src/workspace/command-runner.js";
import { resolveEgressPolicy } from "../../src/workspace/egress-policy.js";
import { openJobNetwork } from "../../src/workspace/egress-proxy.js";
import { evalSandbox, type EvalSandbox } from "../sandbox.js";
import type { SweInstance, TestRunner } from "./instance.js";
import { parseTestLog, type TestResults } from "./parse-test-log.js";

export interface CommandOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** Where the commands run (default: BLUEPRINT_SANDBOX and BLUEPRINT_NETWORK_ALLOW of this process's environment). */
  sandbox?: EvalSandbox;
}

const LOG_CAP_BYTES = 200_000;

let defaultSandbox: EvalSandbox | undefined;
/** For the task authors' tools, which call the judge directly; the eval hands its own choice down. */
function sandboxOf(opts: CommandOptions): EvalSandbox {
  return (
    opts.sandbox ?? (defaultSandbox ??= evalSandbox(process.env, (text) => process.stderr.write(`note: ${text}\n`)))
  );
}

const runners = new Map<string | null, CommandRunner>();
/**
 * The engine's command runner: inside bubblewrap (system directories read-only, the tree writable, a
 * private HOME and /tmp, its own /proc and network) unless the sandbox choice is to run plainly,
 * always with the scrubbed environment.
 */
function runnerFor(sandbox: EvalSandbox): CommandRunner {
  let runner = runners.get(sandbox.bwrap);
  if (!runner) {
    runner = createCommandRunner({ bwrapPath: sandbox.bwrap, outputCapBytes: LOG_CAP_BYTES, maxTimeoutMs: 3_600_000 });
    runners.set(sandbox.bwrap, runner);
  }
  return runner;
}

/** The instance's `install`, else `npm ci` with a lockfile and `npm install` without one. */
export function installCommand(inst: SweInstance, dir: string): string {
  if (inst.install) return inst.install;
  const locked = existsSync(path.join(dir, "package-lock.json")) || existsSync(path.join(dir, "npm-shrinkwrap.json"));
  return locked ? "npm ci --no-audit --no-fund" : "npm install --no-audit --no-fund";
}

/**
 * Installs on the pristine checkout, before the agent. The install runs the dataset's `install` and
 * every package's lifecycle scripts, so it runs like a build's setup (workflow/build/setup.ts): in the sandbox,
 * with the package registries alone through its own proxy, and no host environment or HOME.
 */
export async function installDependencies(
  inst: SweInstance,
  dir: string,
  opts: CommandOptions,
): Promise<{ ok: boolean; log: string }> {
  const command = installCommand(inst, dir);
  const sandbox = sandboxOf(opts);
  const runner = runnerFor(sandbox);
  // The plain runner's commands have no bridge: they reach the proxy on the host's loopback.
  const network = await openJobNetwork(resolveEgressPolicy("registries", sandbox.ceiling).policy, {
    tcp: runner.isolation === "plain",
  });
  try {
    const result = await runner.run(command, { cwd: dir, network, timeoutMs: opts.timeoutMs, signal: opts.signal });
    const verdict = result.timedOut
      ? `timed out after ${opts.timeoutMs} ms`
      : opts.signal?.aborted
        ? "stopped"
        : `exit ${result.exitCode}`;
    const blocked = network
      .refusals()
      .map(({ host, count }) => `\nnetwork: blocked ${host} ×${count}`)
      .join("");
    return {
      ok: result.exitCode === 0 && !result.timedOut && !opts.signal?.aborted,
      log: `$ ${command}\n${result.output}\n[${verdict}, ${result.durationMs} ms, ${runner.isolation === "bwrap" ? "in bubblewrap" : "WITHOUT a sandbox"}]${blocked}`,
    };
  } finally {
    await network.close();
  }
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

/** Runs the tests in `dir` (sandboxed, without network) and parses the reporter's stdout. */
export async function runTests(
  inst: SweInstance,
  dir: string,
  opts: CommandOptions,
  runner: CommandRunner = runnerFor(sandboxOf(opts)),
): Promise<TestRun> {
  const { command, runner: testRunnerName } = testCommand(inst, dir);
  // stdout goes to a file so that the reporter's JSON is not interleaved with stderr.
  const stdoutFile = path.join(dir, ".swe-test-stdout");
  const result = await runner.run(`(${command}) > .swe-test-stdout`, {
    cwd: dir,
    timeoutMs: opts.timeoutMs,
    signal: opts.signal,
  });
  const stdout = existsSync(stdoutFile) ? readFileSync(stdoutFile, "utf8") : "";
  rmSync(stdoutFile, { force: true });
  const ending = result.timedOut
    ? `timed out after ${opts.timeoutMs} ms`
    : opts.signal?.aborted
      ? "stopped"
      : `exit ${result.exitCode}`;
  const log = `$ ${command}\n${result.output}\n[${ending}, ${result.durationMs} ms]`;
  if (result.timedOut || opts.signal?.aborted)
    return { results: new Map(), log: `${log}\n${tail(stdout)}`, error: `the tests ${ending}` };
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
