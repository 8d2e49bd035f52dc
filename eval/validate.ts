import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { checkRunner, runHiddenCheck } from "./hidden-check.js";
import type { EvalItem } from "./items.js";
import type { Judge, Validation } from "./judge.js";
import type { EvalSandbox } from "./sandbox.js";
import { applyGoldPatch, writeStartingTree } from "./smoke-sources.js";

/**
 * Whether an item can be scored at all, as SWE-bench validates its tasks: a SWE instance through the
 * judge (every FAIL_TO_PASS test fails before the gold patch and passes after it, PASS_TO_PASS passes
 * both times); a smoke task's hidden check fails on the earlier version and passes with the gold patch
 * (the diff to the later version) applied.
 */
export async function validateItem(
  item: EvalItem,
  judge: Judge | null,
  timeoutMs: number,
  sandbox: EvalSandbox,
): Promise<Validation> {
  if (item.kind === "swe") {
    if (!judge) throw new Error("SWE-format instances need the judge (eval/swe/)");
    return judge.validateInstance(item.instance, item.source, { timeoutMs, sandbox });
  }
  const started = performance.now();
  const sources = await item.sources();
  const problems: string[] = [];
  const trees: string[] = [];
  try {
    for (const withChange of [false, true]) {
      const tree = mkdtempSync(path.join(os.tmpdir(), `blueprint-eval-validate-${item.id}-`));
      trees.push(tree);
      writeStartingTree(sources, tree);
      if (withChange) await applyGoldPatch(sources, tree);
      const check = await runHiddenCheck(sources.check, tree, checkRunner(sandbox), { timeoutMs });
      if (check.passed !== withChange)
        problems.push(
          withChange
            ? `the hidden check fails with the gold patch (${item.task.meta.package}@${item.task.meta.to}'s change): ${check.output.slice(-500)}`
            : `the hidden check passes on ${item.task.meta.package}@${item.task.meta.from}`,
        );
    }
  } finally {
    for (const tree of trees) rmSync(tree, { recursive: true, force: true });
  }
  return { ok: problems.length === 0, problems, durationMs: performance.now() - started };
}
