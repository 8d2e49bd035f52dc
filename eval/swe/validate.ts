import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { checkoutInstance, type RepoSource } from "./checkout.js";
import { installDependencies } from "./commands.js";
import type { SweInstance } from "./instance.js";
import { judgeInstance, type JudgeOptions, type JudgeReport } from "./judge.js";
import { applyPatch } from "./patch.js";

export interface ValidateOptions extends JudgeOptions {
  /** For `npm ci` (default: timeoutMs). */
  installTimeoutMs?: number;
  /** Keep the checkout (its path is in the result) instead of removing it. */
  keep?: boolean;
}

export interface GoldRuns {
  /** With test_patch, without the gold patch. */
  before: JudgeReport;
  /** With test_patch and the gold patch. */
  after: JudgeReport;
  durationMs: number;
  dir: string;
}

/**
 * Checks out the instance, installs, runs the tests with test_patch only, then with the gold patch
 * too. Throws when the checkout, the install or the gold patch fails (the reason is in the message).
 */
export async function runWithAndWithoutGold(
  inst: SweInstance,
  source: RepoSource,
  opts: ValidateOptions,
): Promise<GoldRuns> {
  const started = Date.now();
  const gold = inst.patch;
  if (!gold) throw new Error(`${inst.instance_id} has no gold patch`);
  const dir = mkdtempSync(path.join(os.tmpdir(), `swe-${inst.instance_id.replace(/[^\w.-]/g, "_")}-`));
  try {
    await checkoutInstance(inst, source, dir);
    const installed = await installDependencies(inst, dir, {
      timeoutMs: opts.installTimeoutMs ?? opts.timeoutMs,
      signal: opts.signal,
      sandbox: opts.sandbox,
    });
    if (!installed.ok) throw new Error(`installing the dependencies failed:\n${installed.log.slice(-4_000)}`);
    const before = await judgeInstance(inst, dir, opts);
    await applyPatch(dir, gold, "gold patch");
    const after = await judgeInstance(inst, dir, opts);
    return { before, after, durationMs: Date.now() - started, dir };
  } finally {
    if (!opts.keep) rmSync(dir, { recursive: true, force: true });
  }
}

export interface ValidationResult {
  ok: boolean;
  /** Each reason the instance is unsound, in words. */
  problems: string[];
  durationMs: number;
}

/**
 * SWE-bench's gold validation: with test_patch and without the gold patch every FAIL_TO_PASS test
 * fails and every PASS_TO_PASS test passes; with the gold patch all of them pass. An instance that
 * fails this is not scored.
 */
export async function validateInstance(
  inst: SweInstance,
  source: RepoSource,
  opts: ValidateOptions,
): Promise<ValidationResult> {
  const started = Date.now();
  const problems: string[] = [];
  if (inst.FAIL_TO_PASS.length === 0) problems.push("FAIL_TO_PASS is empty: nothing shows the problem");
  let runs: GoldRuns;
  try {
    runs = await runWithAndWithoutGold(inst, source, opts);
  } catch (error) {
    return {
      ok: false,
      problems: [...problems, error instanceof Error ? error.message : String(error)],
      durationMs: Date.now() - started,
    };
  }
  const { before, after } = runs;
  if (before.error !== undefined)
    problems.push(`without the gold patch the tests could not be judged: ${before.error}`);
  if (after.error !== undefined) problems.push(`with the gold patch the tests could not be judged: ${after.error}`);
  for (const id of before.FAIL_TO_PASS.success) problems.push(`FAIL_TO_PASS test passes without the gold patch: ${id}`);
  for (const id of before.PASS_TO_PASS.failure)
    if (before.error === undefined) problems.push(`PASS_TO_PASS test does not pass without the gold patch: ${id}`);
  for (const id of after.FAIL_TO_PASS.failure)
    if (after.error === undefined) problems.push(`FAIL_TO_PASS test does not pass with the gold patch: ${id}`);
  for (const id of after.PASS_TO_PASS.failure)
    if (after.error === undefined) problems.push(`PASS_TO_PASS test does not pass with the gold patch: ${id}`);
  return { ok: problems.length === 0, problems, durationMs: Date.now() - started };
}
