import { existsSync, rmSync } from "node:fs";
import path from "node:path";
import type { CommandRunner } from "../../src/workspace/command-runner.js";
import { git } from "./git.js";
import type { SweInstance } from "./instance.js";
import { applyPatch, filesOfPatch } from "./patch.js";
import { runTests, type CommandOptions } from "./commands.js";
import type { TestResults, TestStatus } from "./parse-test-log.js";

export interface TestListReport {
  success: string[];
  failure: string[];
}

export interface JudgeReport {
  /** SWE-bench's "resolved": every FAIL_TO_PASS and every PASS_TO_PASS test passed. */
  resolved: boolean;
  FAIL_TO_PASS: TestListReport;
  PASS_TO_PASS: TestListReport;
  /** Every test the run reported, by id (empty when the tests could not be judged). */
  statuses: Record<string, TestStatus>;
  /** The test command's output and how it ended. */
  log: string;
  /** Why the tests could not be judged at all (test_patch did not apply, timeout, no reporter output). */
  error?: string;
}

export interface JudgeOptions extends CommandOptions {
  /** Runs the test command (default: the sandboxed runner). */
  runner?: CommandRunner;
}

/**
 * Judges the tree in `dir` as it is (the agent's result): the files test_patch touches are put
 * back as they were at base_commit (as SWE-bench does, so edits to the tests do not count), the
 * test patch is applied, the tests run, and each listed test must pass.
 */
export async function judgeInstance(inst: SweInstance, dir: string, opts: JudgeOptions): Promise<JudgeReport> {
  try {
    await restoreTestFiles(inst, dir);
    await applyPatch(dir, inst.test_patch, "test_patch");
  } catch (error) {
    return failedReport(inst, "", error instanceof Error ? error.message : String(error));
  }
  const run = await runTests(inst, dir, opts, opts.runner);
  if (run.error !== undefined) return failedReport(inst, run.log, run.error);
  return { ...reportFromResults(inst, run.results), statuses: Object.fromEntries(run.results), log: run.log };
}

/** SWE-bench's report: a listed test succeeds only when it ran and passed (missing or skipped is a failure). */
export function reportFromResults(
  inst: Pick<SweInstance, "FAIL_TO_PASS" | "PASS_TO_PASS">,
  results: TestResults,
): Omit<JudgeReport, "log" | "statuses"> {
  const split = (ids: string[]): TestListReport => ({
    success: ids.filter((id) => results.get(id) === "passed"),
    failure: ids.filter((id) => results.get(id) !== "passed"),
  });
  const failToPass = split(inst.FAIL_TO_PASS);
  const passToPass = split(inst.PASS_TO_PASS);
  return {
    resolved: failToPass.failure.length === 0 && passToPass.failure.length === 0,
    FAIL_TO_PASS: failToPass,
    PASS_TO_PASS: passToPass,
  };
}

function failedReport(inst: SweInstance, log: string, error: string): JudgeReport {
  return {
    resolved: false,
    FAIL_TO_PASS: { success: [], failure: [...inst.FAIL_TO_PASS] },
    PASS_TO_PASS: { success: [], failure: [...inst.PASS_TO_PASS] },
    statuses: {},
    log,
    error,
  };
}

async function restoreTestFiles(inst: SweInstance, dir: string): Promise<void> {
  for (const file of filesOfPatch(inst.test_patch)) {
    const atBase = await git(["cat-file", "-e", `${inst.base_commit}:${file}`], { cwd: dir, allowFailure: true });
    if (atBase.code === 0) await git(["checkout", inst.base_commit, "--", file], { cwd: dir });
    else if (existsSync(path.join(dir, file))) rmSync(path.join(dir, file), { recursive: true, force: true });
  }
  // `git checkout <commit> -- file` also stages it; unstage so the tree reads as the agent left it plus the tests.
  await git(["reset", "-q"], { cwd: dir, allowFailure: true });
}
