/**
 * For task authors: fills FAIL_TO_PASS and PASS_TO_PASS of a real suite's tasks by running the
 * repository's tests with test_patch only, then with the fix too (F2P: not passing before, passing
 * after; P2P: passing both times), and generates a package-lock.json for a base commit that has
 * none. Writes the lists back into suite.json.
 *
 *   npx tsx eval/swe/derive-test-lists.ts eval/suites/real/<owner>__<name> --repos DIR [--only ID,…]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { createCommandRunner } from "../../src/workspace/command-runner.js";
import { checkoutInstance } from "./checkout.js";
import { loadRealSuite, realSuiteSchema, type RealSuite } from "./real-suite.js";
import { runWithAndWithoutGold } from "./validate.js";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { repos: { type: "string" }, only: { type: "string" } },
});
const suiteDir = path.resolve(positionals[0] ?? "");
const reposDir = values.repos;
if (!positionals[0] || !reposDir) throw new Error("usage: derive-test-lists.ts <suite dir> --repos DIR [--only ID,…]");
const suiteFile = path.join(suiteDir, "suite.json");
const suite: RealSuite = realSuiteSchema.parse(JSON.parse(readFileSync(suiteFile, "utf8")));
const only = values.only?.split(",");
const save = () => writeFileSync(suiteFile, `${JSON.stringify(suite, null, 2)}\n`);

for (const task of suite.tasks) {
  if (only && !only.includes(task.instance_id)) continue;
  if (!task.lockfile) task.lockfile = await lockfileFor(task.instance_id, task.base_commit);
  save();
  const [inst] = await loadRealSuite({
    root: path.dirname(suiteDir),
    reposDir,
    problemStatements: false,
    only: [task.instance_id],
  });
  if (!inst) throw new Error(`${task.instance_id} did not load`);
  const runs = await runWithAndWithoutGold(inst, inst.source, { timeoutMs: 300_000 });
  for (const [when, report] of [
    ["before", runs.before],
    ["after", runs.after],
  ] as const) {
    if (report.error !== undefined)
      throw new Error(`${task.instance_id} ${when}: ${report.error}\n${report.log.slice(-3000)}`);
  }
  const ids = Object.keys(runs.after.statuses).sort();
  task.FAIL_TO_PASS = ids.filter(
    (id) =>
      runs.after.statuses[id] === "passed" &&
      runs.before.statuses[id] !== "passed" &&
      runs.before.statuses[id] !== "skipped",
  );
  task.PASS_TO_PASS = ids.filter((id) => runs.after.statuses[id] === "passed" && runs.before.statuses[id] === "passed");
  const broken = ids.filter((id) => runs.after.statuses[id] === "failed");
  save();
  console.log(
    `${task.instance_id}: ${task.FAIL_TO_PASS.length} F2P, ${task.PASS_TO_PASS.length} P2P, ${broken.length} failing after the fix (left out), ${runs.durationMs} ms`,
  );
  for (const id of task.FAIL_TO_PASS) console.log(`  F2P ${id}`);
  for (const id of broken) console.log(`  still failing: ${id}`);
}

/** `npm install --package-lock-only` at the base commit: today's resolution of its declared ranges. */
async function lockfileFor(id: string, base: string): Promise<string | undefined> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "swe-lock-"));
  try {
    await checkoutInstance(
      {
        instance_id: id,
        repo: suite.repo,
        base_commit: base,
        problem_statement: "-",
        test_patch: "-",
        FAIL_TO_PASS: [],
        PASS_TO_PASS: [],
      },
      { reposDir: reposDir ?? "" },
      dir,
    );
    if (existsSync(path.join(dir, "package-lock.json"))) return undefined;
    const result = await createCommandRunner({ maxTimeoutMs: 600_000 }).run(
      "npm install --package-lock-only --ignore-scripts --no-audit --no-fund",
      { cwd: dir, timeoutMs: 300_000 },
    );
    if (result.exitCode !== 0) throw new Error(`npm install --package-lock-only failed for ${id}:\n${result.output}`);
    const name = `lockfiles/${base.slice(0, 12)}.package-lock.json`;
    writeFileSync(path.join(suiteDir, name), readFileSync(path.join(dir, "package-lock.json")));
    return name;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
