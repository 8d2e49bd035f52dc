// BENCH_BASELINE=<git ref>: the load bench as same-run pairs. In each mode (and warm-up) the baseline's build
// (bench/support/baseline.mjs) and this checkout's take turns under the same conditions, BENCH_BASELINE_ROUNDS
// rounds each (2), the order flipped every round (baseline, current; current, baseline; …). Every run prints its
// own report as usual; then one table per mode: each figure for both builds, after ÷ before on the medians, and each
// build's spread (its runs' range over their median), with a call on whether the difference is beyond that spread.
import { BASELINE_ROUNDS as ROUNDS, type Baseline } from "../support/baseline.mjs";
import { orderOf, PAIR_HEADER, pairRows, figureValue, type Build, type PairedFigure } from "../support/pairs.mjs";
import { PROJECT_ROOT } from "../../test/e2e/support/app-process.js";
import { WARM_UPS, type Mode } from "./config.js";
import { printTable } from "./format.js";
import { conditionOf } from "./report.js";
import { runMode, type Run } from "./run-mode.js";

/** Both builds' runs in `mode` after `warmUp` bots' comments, interleaved, then their table. */
export async function runPairs(baseline: Baseline, mode: Mode, warmUp: number, title: string): Promise<void> {
  const runs: Record<Build, Run[]> = { baseline: [], current: [] };
  const roots: Record<Build, string> = { baseline: baseline.root, current: PROJECT_ROOT };
  for (let round = 0; round < ROUNDS; round++) {
    for (const build of orderOf(round)) {
      const which = build === "baseline" ? `baseline ${baseline.label}` : "current (this checkout)";
      console.log(`\n--- ${title}; ${conditionOf(warmUp)}; ${which}, round ${round + 1} of ${ROUNDS} ---\n`);
      runs[build].push(await runMode(mode, warmUp, roots[build]));
    }
  }
  const when = WARM_UPS.length > 1 ? `, ${conditionOf(warmUp)}` : "";
  console.log(`\n--- ${mode}${when}: baseline ${baseline.label} against current, same run ---\n`);
  printTable(PAIR_HEADER, pairRows(pairedFigures(runs, mode)));
  console.log(
    `\n${ROUNDS} run(s) of each build, alternating (${Array.from({ length: ROUNDS }, (_, n) => orderOf(n).join(", ")).join("; ")}). ` +
      "after ÷ before on the medians; spread: a build's largest run minus its smallest, over their median. " +
      "A ratio further from 1 than the larger spread is called beyond spread; lower is better for every figure.",
  );
}

/** Counts printed as numbers where fewer is not better: left out of the pairs (every run prints them). */
const NOT_LOWER_IS_BETTER = new Set(['"Queued" notices', "installation tokens minted"]);

/**
 * The figures both builds printed as a number in every run (times and counts: see figureValue), then the intake's
 * CPU from the first webhook to the end, and (local mode) its workers'.
 */
export function pairedFigures(runs: Record<Build, Run[]>, mode: Mode): PairedFigure[] {
  const all = [...runs.baseline, ...runs.current];
  const names = (all[0]?.rows ?? []).map(([name]) => name).filter((name) => !NOT_LOWER_IS_BETTER.has(name));
  const figures = names.flatMap((name): PairedFigure[] => {
    const values = (list: Run[]) => list.map((run) => figureValue(run.rows.find(([n]) => n === name)?.[1] ?? ""));
    const [before, after] = [values(runs.baseline), values(runs.current)];
    const units = new Set([...before, ...after].map((value) => value?.unit));
    if (units.size !== 1 || units.has(undefined)) return [];
    const numbers = (list: typeof before) => list.map((value) => value?.value ?? NaN);
    return [{ name, unit: [...units][0] ?? "", before: numbers(before), after: numbers(after) }];
  });
  const cpu = (name: string, of: (run: Run) => number | undefined): PairedFigure[] => {
    const seconds = (list: Run[]) => list.map((run) => (of(run) ?? NaN) / 1000);
    const [before, after] = [seconds(runs.baseline), seconds(runs.current)];
    return [...before, ...after].some(Number.isNaN) ? [] : [{ name, unit: "s", before, after }];
  };
  return [
    ...figures,
    ...cpu("CPU: the intake, first webhook to the end", (run) => run.cpu?.app),
    // With Redis the workers are not the intake's children: their CPU is not told apart from the machine's.
    ...(mode === "local" ? cpu("CPU: its local worker, job runners and their git", (run) => run.cpu?.workers) : []),
  ];
}
