import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { EVAL_USAGE, EvalUsageError, parseEvalArgs, type EvalArgs } from "./args.js";
import { renderChart } from "./chart-svg.js";
import { compareReports } from "./compare.js";
import { chooseItems, type EvalItem } from "./items.js";
import { loadJudge, type Judge } from "./judge.js";
import { defaultEvalCacheDir } from "./npm-tarball.js";
import { preflight } from "./preflight.js";
import { renderMarkdown, renderValidation } from "./report.js";
import { readResults, type StoredResults } from "./results-store.js";
import { runEval, type EvalReport } from "./runner.js";
import { evalSandbox, type EvalSandbox } from "./sandbox.js";
import { SMOKE_DIR } from "./task-suite.js";
import { validateItem } from "./validate.js";
import { Slots } from "../src/shared/slots.js";

export interface EvalIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** What a run reads beyond its arguments; tests put a scripted judge and their own suites here. */
export interface EvalDeps {
  smokeDir?: string;
  realRoot?: string;
  /** The SWE judge; by default eval/swe/, loaded when the first SWE item needs it. */
  judge?: Judge;
}

export const DEFAULT_OUT_DIR = path.resolve(import.meta.dirname, "results");

/**
 * `npm run eval`: arguments → preflight → runs → report files; returns the exit status and, when it ran, the report.
 */
export async function main(
  argv: string[],
  env: NodeJS.ProcessEnv,
  io: EvalIo,
  deps: EvalDeps = {},
): Promise<{ exitCode: number; report: EvalReport | null }> {
  const fail = (error: unknown, usage = error instanceof EvalUsageError) => {
    io.stderr(
      `eval: ${error instanceof Error ? error.message : String(error)}${usage ? "\nRun `npm run eval -- --help` for usage." : ""}`,
    );
    return { exitCode: 2, report: null };
  };
  if (argv[0] === "compare") {
    if (argv.length !== 3)
      return fail(new EvalUsageError("compare takes two report files: npm run eval -- compare A.json B.json"));
    try {
      io.stdout(compareReports(argv[1] ?? "", argv[2] ?? ""));
      return { exitCode: 0, report: null };
    } catch (error) {
      return fail(error);
    }
  }

  // 1. What was asked.
  let args: EvalArgs;
  try {
    args = parseEvalArgs(argv, env, DEFAULT_OUT_DIR);
  } catch (error) {
    return fail(error);
  }
  if (args.help) {
    io.stdout(EVAL_USAGE);
    return { exitCode: 0, report: null };
  }
  let sandbox: EvalSandbox;
  try {
    sandbox = evalSandbox(env, (text) => io.stderr(`eval: note: ${text}`));
  } catch (error) {
    return fail(error);
  }

  // 2. The endpoint and key, checked before anything slow (the real suite may fetch its repositories).
  if (args.preflight && !args.validate) {
    const checked = await preflight(args.baseUrl, args.apiKey, args.model);
    if (!checked.ok) {
      io.stderr(
        `eval: the model endpoint does not work, so no task was started: ${checked.problem}\n(--no-preflight skips this check.)`,
      );
      return { exitCode: 2, report: null };
    }
    if (checked.note) io.stderr(`eval: note: ${checked.note}`);
  }

  // 3. Which items, and what an earlier run being resumed already did.
  let items: EvalItem[];
  let judge: Judge | null;
  let previous: StoredResults | null;
  try {
    ({ items, judge } = await loadItems(args, deps));
    previous = args.resume ? resumable(args.resume, items, args.runs) : null;
  } catch (error) {
    return fail(error);
  }

  // 4. --validate: only the validation table (a smoke task whose packages cannot be fetched fails there).
  if (args.validate) return validateOnly(items, judge, args, sandbox, io);

  // 5. The smoke tasks' packages, fetched (or found in the cache) before any run starts.
  try {
    await fetchSmokeSources(items);
  } catch (error) {
    return fail(error);
  }

  // 6. The runs, each logged to its own file; the results file is rewritten as each ends.
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const logDir = path.join(args.outDir, stamp);
  mkdirSync(args.outDir, { recursive: true });
  const resultsFile = args.resume ?? path.join(args.outDir, `eval-${stamp}.json`);
  const base = resultsFile.replace(/\.json$/, "");
  const suite = "dataset" in args.choice ? args.choice.dataset : args.choice.suite;
  io.stderr(
    `eval: ${items.length} task${items.length === 1 ? "" : "s"} (${suite}) × ${args.runs} run${args.runs === 1 ? "" : "s"} against ${args.baseUrl}, ${Math.round(args.taskTimeoutMs / 1000)} s per run at most; ${previous ? `resuming ${resultsFile} (${previous.runs.length} runs done); ` : ""}logs in ${logDir}`,
  );
  const report = await runEval(
    items,
    {
      ...args,
      logDir,
      env: cliEnvironment(env),
      judge,
      sandbox,
      suite,
      resultsFile,
      previous,
      validateFirst: args.validateFirst,
    },
    (run) =>
      io.stderr(
        `eval: ${run.task} run ${run.run}: plan ${run.plan.valid ? "valid" : "invalid"}, ${run.check.passed ? "passed" : "failed"}${run.failure ? ` (${run.failure})` : ""}, ${run.usage.total.requests} requests${run.usage.total.errors > 0 ? ` (+${run.usage.total.errors} failed)` : ""}, ${run.seconds.total.toFixed(1)} s${run.error ? ` (harness error: ${run.error})` : ""}`,
      ),
    (id, validation) =>
      io.stderr(
        `eval: ${id}: ${validation.ok ? "valid" : `fails validation, not scored: ${validation.problems.join("; ")}`}`,
      ),
  );

  // 7. The report: printed, and written as JSON (already), Markdown and an SVG chart.
  const markdown = renderMarkdown(report);
  writeFileSync(`${base}.md`, markdown);
  writeFileSync(`${base}.svg`, renderChart(report));
  io.stdout(markdown);
  io.stderr(`eval: wrote ${resultsFile}, ${base}.md and ${base}.svg`);
  return { exitCode: exitCodeOf(report, args, io), report };
}

/**
 * 1 when a run could not be completed by the harness, when the endpoint answered nothing, or when the
 * share of passing runs is below --fail-under (without it: when no run passed at all).
 */
function exitCodeOf(report: EvalReport, args: EvalArgs, io: EvalIo): number {
  const { totals, runs, checkPassed } = report.overall;
  if (totals.requests === 0 && totals.errors > 0)
    io.stderr(
      `eval: the model endpoint ${args.baseUrl} answered none of ${totals.errors} requests; the runs' logs say why.`,
    );
  const broken = report.runs.some((run) => run.error !== null) || (totals.requests === 0 && totals.errors > 0);
  const rate = runs === 0 ? 0 : checkPassed / runs;
  const below = args.failUnder === undefined ? checkPassed === 0 : rate < args.failUnder;
  if (below)
    io.stderr(
      `eval: ${checkPassed} of ${runs} runs passed (${(rate * 100).toFixed(1)}%), ${args.failUnder === undefined ? "none did" : `below --fail-under ${(args.failUnder * 100).toFixed(1)}%`}: exit 1.`,
    );
  return broken || below ? 1 : 0;
}

async function loadItems(args: EvalArgs, deps: EvalDeps): Promise<{ items: EvalItem[]; judge: Judge | null }> {
  const smoke = "suite" in args.choice && args.choice.suite === "smoke";
  const judge = deps.judge ?? (smoke ? null : await loadJudge());
  const items = await chooseItems(args.choice, args.tasks, {
    smokeDir: deps.smokeDir ?? SMOKE_DIR,
    npm: { registry: args.registry, cacheDir: args.cacheDir ?? defaultEvalCacheDir() },
    cacheDir: args.cacheDir,
    realRoot: deps.realRoot,
    // Validation needs no issue text: it runs offline with the repositories at hand.
    problemStatements: !args.validate,
    judge: () => {
      if (!judge) throw new Error("SWE-format instances need the judge (eval/swe/)");
      return judge;
    },
  });
  return { items, judge };
}

/** Every smoke item's two package versions, four at a time; the first that cannot be had stops the eval. */
async function fetchSmokeSources(items: EvalItem[]): Promise<void> {
  const slots = new Slots(4);
  await Promise.all(items.map((item) => (item.kind === "smoke" ? slots.run(() => item.sources()) : null)));
}

/**
 * The earlier results to resume; resuming rewrites the file with the chosen runs only, so it refuses a selection that
 * would drop some.
 */
function resumable(file: string, items: EvalItem[], runs: number): StoredResults {
  const previous = readResults(file);
  const chosen = new Set(items.map((item) => item.id));
  const dropped = previous.runs
    .filter((run) => !chosen.has(run.task) || run.run > runs)
    .map((run) => `${run.task} run ${run.run}`);
  if (dropped.length > 0)
    throw new Error(
      `--resume ${file} holds runs this selection would drop (${dropped.join(", ")}): choose the same tasks and --runs, or resume a copy.`,
    );
  return previous;
}

async function validateOnly(
  items: EvalItem[],
  judge: Judge | null,
  args: EvalArgs,
  sandbox: EvalSandbox,
  io: EvalIo,
): Promise<{ exitCode: number; report: null }> {
  const results: Array<{ id: string; ok: boolean; problems: string[]; durationMs: number }> = [];
  for (const item of items) {
    const validation = await validateItem(item, judge, args.taskTimeoutMs, sandbox).catch((error: unknown) => ({
      ok: false,
      problems: [`validation could not run: ${error instanceof Error ? error.message : String(error)}`],
      durationMs: 0,
    }));
    results.push({ id: item.id, ...validation });
    io.stderr(`eval: ${item.id}: ${validation.ok ? "ok" : "FAILS"} (${(validation.durationMs / 1000).toFixed(1)} s)`);
  }
  io.stdout(renderValidation(results));
  return { exitCode: results.every((result) => result.ok) ? 0 : 1, report: null };
}

/** The CLI gets Blueprint's limits and sandbox settings from the environment; model settings come from the harness. */
function cliEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  const passed: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || !name.startsWith("BLUEPRINT_")) continue;
    if (name === "BLUEPRINT_WORKDIR" || name === "BLUEPRINT_MODEL" || name.startsWith("BLUEPRINT_EVAL_")) continue;
    passed[name] = value;
  }
  return passed;
}
