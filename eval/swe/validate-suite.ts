/**
 * For task authors: SWE-bench's gold validation of real-suite tasks, one at a time, with how long
 * each took. `npm run eval -- --validate` does the same inside the harness.
 *
 *   npx tsx eval/swe/validate-suite.ts [--repos DIR] [--only ID,…]
 */
import { parseArgs } from "node:util";
import { loadRealSuite } from "./real-suite.js";
import { validateInstance } from "./validate.js";

const { values } = parseArgs({ options: { repos: { type: "string" }, only: { type: "string" } } });
const instances = await loadRealSuite({
  reposDir: values.repos,
  problemStatements: false,
  only: values.only?.split(","),
});
let failed = 0;
for (const inst of instances) {
  const result = await validateInstance(inst, inst.source, { timeoutMs: 120_000, installTimeoutMs: 300_000 });
  if (!result.ok) failed++;
  console.log(
    `${result.ok ? "valid  " : "INVALID"} ${inst.instance_id} (${(result.durationMs / 1000).toFixed(1)} s)${result.problems.map((problem) => `\n  ${problem}`).join("")}`,
  );
}
console.log(`${instances.length - failed} of ${instances.length} valid`);
process.exitCode = failed > 0 ? 1 : 0;
