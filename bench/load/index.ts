// Load, as issue #11 measured it: 1000 signed webhooks at concurrency 100 over 100 installations
// (810 /plan by writers on 150 issues, 20 comments delivered 3× with one delivery id, 80 by a
// read-only user, 50 by a bot), against a local GitHub double that serves REST and git smart HTTP;
// each /plan clones its repository and runs a two-request model conversation (read package.json,
// submit a plan), and every comment the app posts is echoed back as a webhook, as GitHub does.
// Twice: local (`npm start` alone) and with Redis (one intake with BLUEPRINT_WORKERS=0 and two
// `npm run worker` processes), then both side by side. Measured from outside: webhook response
// times, time to the first 👀 per installation and per comment, and what must never happen
// (duplicates, unauthorized runs, lost commands). Figures are printed, not asserted.
//
// By default the burst is the app's first traffic once /healthz says ready: a process that has just
// started, where issue #29 says the targets stand. BENCH_LOAD_WARM_UP=3000 measures a long-running
// App instead (3000 bots' comments first, unmeasured), and BENCH_LOAD_WARM_UP=0,3000 both, side by side.
//
// Run through bench/index.mjs (`npm run bench load`), which starts it with `node --import tsx`.
// Knobs (environment): BENCH_LOAD_CONCURRENCY (100), BENCH_LOAD_DEADLINE_S (300, per run),
// BENCH_LOAD_MODES (local,redis), BENCH_LOAD_WARM_UP (0), BENCH_LOAD_JOB_CONCURRENCY (32), and for a trial on a
// busy machine BENCH_LOAD_INSTALLATIONS (100; fewer means fewer webhooks, and figures that are not issue #11's);
// for looking into a figure: BENCH_LOAD_TRACE=<installation id> prints that installation's timeline,
// BENCH_LOAD_APP_NODE_OPTIONS adds Node options to the app (e.g. `--import <a profiler hook>`),
// BENCH_LOAD_APP_LOG=<file> writes the app's output there.
// The app runs with bench/support/loop-probe.mjs preloaded, which reports its event-loop delay.
//
// Same-run pairs: BENCH_BASELINE=<git ref> (e.g. `8747d3c^`) builds that ref once (bench/support/baseline.mjs) and
// runs it and this checkout in turn in each mode, BENCH_BASELINE_ROUNDS rounds each (2), then prints each figure
// for both, after ÷ before, and each build's spread between its own runs (pairs.ts). Both builds meet the same
// double, sender and settings: a baseline that reads other settings than the ones set here keeps its defaults.
//
// The parts: config.ts (conditions and knobs), conditions.ts (who comments what, in which order),
// github.ts (the double and its echoes), processes.ts (the app as an operator starts it), sender.ts
// (readiness, warm-up, burst), run-mode.ts (one run), effects.ts and tally.ts (what GitHub saw against
// what it should have), machine.ts (CPU, threads, event loop), report.ts (one run's figures), pairs.ts (BENCH_BASELINE).
import { requireBuiltApp } from "../../test/e2e/support/app-process.js";
import { baselineRef, builtBaseline } from "../support/baseline.mjs";
import { MODES, WARM_UPS } from "./config.js";
import { printTable } from "./format.js";
import { runPairs } from "./pairs.js";
import { conditionOf } from "./report.js";
import { runMode, type Run } from "./run-mode.js";

const TITLES = {
  local: "local: `npm start` alone",
  redis: "Redis: one intake (BLUEPRINT_WORKERS=0) and two `npm run worker` processes",
};

export async function run(): Promise<void> {
  requireBuiltApp();
  const ref = baselineRef();
  if (ref) return runBaselinePairs(ref);
  const runs: Run[] = [];
  for (const mode of MODES) {
    for (const warmUp of WARM_UPS) {
      console.log(`\n--- ${TITLES[mode]}; ${conditionOf(warmUp)} ---\n`);
      runs.push(await runMode(mode, warmUp));
    }
  }
  if (runs.length > 1) sideBySide(runs);
}

/** BENCH_BASELINE: the baseline's build and this one in turn, mode by mode (pairs.ts). */
async function runBaselinePairs(ref: string): Promise<void> {
  const baseline = await builtBaseline(ref);
  requireBuiltApp(baseline.root);
  for (const mode of MODES) for (const warmUp of WARM_UPS) await runPairs(baseline, mode, warmUp, TITLES[mode]);
}

/** Every run's value of each figure in a column of its own, beside the target; a value that misses it says so. */
function sideBySide(runs: Run[]): void {
  console.log("\n--- side by side ---\n");
  const header = [
    "figure",
    "target",
    ...runs.map((r) => (WARM_UPS.length > 1 ? `${r.mode}, ${conditionOf(r.warmUp)}` : r.mode)),
  ];
  const figures = runs[0]?.rows ?? [];
  const rows = figures.map(([figure, , target], n) => [
    figure,
    target,
    ...runs.map((r) => {
      const [, value = "n/a", , met = ""] = r.rows[n] ?? [];
      return met === "NOT MET" ? `${value} (NOT MET)` : value;
    }),
  ]);
  printTable(header, rows);
  if (WARM_UPS.length === 1) console.log(`\nAll runs: ${conditionOf(WARM_UPS[0] ?? 0)}.`);
}
