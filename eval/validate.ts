import { cpSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { runHiddenCheck } from "./hidden-check.js";
import type { EvalItem } from "./items.js";
import type { Judge, Validation } from "./judge.js";

/**
 * Whether an item can be scored at all, as SWE-bench validates its tasks: a SWE instance through the
 * judge (every FAIL_TO_PASS test fails before the gold patch and passes after it, PASS_TO_PASS passes
 * both times); a smoke task's hidden check fails on the snapshot and passes with the real change.
 */
export async function validateItem(item: EvalItem, judge: Judge | null, timeoutMs: number): Promise<Validation> {
  if (item.kind === "swe") {
    if (!judge) throw new Error("SWE-format instances need the judge (eval/swe/)");
    return judge.validateInstance(item.instance, item.source, { timeoutMs });
  }
  const started = performance.now();
  const problems: string[] = [];
  const trees: string[] = [];
  try {
    for (const withChange of [false, true]) {
      const tree = mkdtempSync(path.join(os.tmpdir(), `blueprint-eval-validate-${item.id}-`));
      trees.push(tree);
      cpSync(item.task.repoDir, tree, { recursive: true });
      if (withChange) cpSync(item.task.solutionDir, tree, { recursive: true });
      const check = await runHiddenCheck(item.task, tree, undefined, { timeoutMs });
      if (check.passed !== withChange) problems.push(withChange ? `the hidden check fails with the real change: ${check.output.slice(-500)}` : "the hidden check passes on the starting snapshot");
    }
  } finally {
    for (const tree of trees) rmSync(tree, { recursive: true, force: true });
  }
  return { ok: problems.length === 0, problems, durationMs: performance.now() - started };
}
