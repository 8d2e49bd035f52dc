import { runKey, writeJsonAtomic, type StoredResults } from "./results-store.js";
import { harnessFailure, runTask, type RunSettings, type TaskRun } from "./run-task.js";
import { passAtK, spreadOf, type Spread } from "./scoring.js";
import type { EvalItem } from "./items.js";
import type { Validation } from "./judge.js";
import { validateItem } from "./validate.js";
import { Slots } from "../src/shared/slots.js";

export interface EvalOptions extends RunSettings {
  runs: number;
  concurrency: number;
  /** What the items are, for the report: "smoke", "real", or the dataset file. */
  suite: string;
  /** Rewritten (atomically) as each run ends, so a stopped eval can be resumed from it. */
  resultsFile: string;
  /** An earlier report being resumed: its runs are kept, not run again. */
  previous: StoredResults | null;
  /** Validate each item before running it; one that fails is never scored. */
  validateFirst: boolean;
}

/** What a set of runs (one task's, or all of them) adds up to. */
export interface RunsSummary {
  runs: number;
  planValid: number;
  /** Runs whose first submitted plan was accepted. */
  planFirstTry: number;
  checkPassed: number;
  /** Runs stopped by the time limit. */
  timeLimited: number;
  /** Builds that changed files, and how many of them stayed inside the plan's files. */
  buildInPlan: { yes: number; of: number };
  recall: Spread | null;
  precision: Spread | null;
  stepsDone: Spread | null;
  stepsBlocked: Spread | null;
  stepsFailed: Spread | null;
  questions: Spread | null;
  requests: Spread | null;
  /** Model turns (answered requests) while planning (revise included) and while building. */
  turns: { plan: Spread | null; build: Spread | null };
  promptTokens: Spread | null;
  cachedTokens: Spread | null;
  completionTokens: Spread | null;
  cost: Spread | null;
  costByPhase: { plan: Spread | null; build: Spread | null };
  seconds: {
    setup: Spread | null;
    plan: Spread | null;
    revise: Spread | null;
    build: Spread | null;
    check: Spread | null;
    total: Spread | null;
  };
  /** Sums over the runs, for the bill. */
  totals: {
    requests: number;
    errors: number;
    promptTokens: number;
    cachedTokens: number;
    completionTokens: number;
    cost: number | null;
    seconds: number;
  };
}

export interface EvalReport {
  startedAt: string;
  suite: string;
  endpoint: string;
  model: string | null;
  feedback: string | null;
  runsPerTask: number;
  taskTimeoutS: number;
  tasks: Array<{
    task: string;
    kind: EvalItem["kind"];
    summary: RunsSummary;
    passAt1: number | null;
    passAtN: number | null;
  }>;
  overall: RunsSummary;
  /** Means over the scored tasks with all their runs done (the unbiased estimator, k = 1 and k = runs). */
  passAt: { k1: number | null; kN: number | null };
  /** Validation of each item that was validated (--validate-first), by id. */
  validation: Record<string, Validation>;
  /** Items left out of the scores because they failed validation. */
  unscored: string[];
  runs: TaskRun[];
}

/**
 * Every item `runs` times, at most `concurrency` at once; one run failing to start is reported, not
 * fatal. Runs already in `previous` are kept; the report is written after each run.
 */
export async function runEval(
  items: EvalItem[],
  options: EvalOptions,
  onRun: (run: TaskRun) => void = () => {},
  onValidated: (id: string, validation: Validation) => void = () => {},
): Promise<EvalReport> {
  const startedAt = new Date().toISOString();
  const limit = new Slots(Math.max(1, options.concurrency));
  // 1. Items that fail validation are never scored (validations in the resumed report are reused).
  const validation: Record<string, Validation> = { ...(options.previous?.validation ?? {}) };
  if (options.validateFirst) {
    await Promise.all(
      items
        .filter((item) => validation[item.id] === undefined)
        .map((item) =>
          limit.run(async () => {
            const checked = await validateItem(item, options.judge, options.taskTimeoutMs, options.sandbox).catch(
              (error: unknown) => ({
                ok: false,
                problems: [`validation could not run: ${error instanceof Error ? error.message : String(error)}`],
                durationMs: 0,
              }),
            );
            validation[item.id] = checked;
            onValidated(item.id, checked);
          }),
        ),
    );
  }
  const scored = items.filter((item) => validation[item.id]?.ok !== false);
  const unscored = items.filter((item) => validation[item.id]?.ok === false).map((item) => item.id);

  // 2. The runs not done yet; each result is written as it comes.
  const wanted = new Set(
    scored.flatMap((item) =>
      Array.from({ length: options.runs }, (_, index) => runKey({ task: item.id, run: index + 1 })),
    ),
  );
  const results = (options.previous?.runs ?? []).filter((run) => wanted.has(runKey(run)));
  const done = new Set(results.map(runKey));
  const jobs = scored
    .flatMap((item) => Array.from({ length: options.runs }, (_, index) => ({ item, run: index + 1 })))
    .filter((job) => !done.has(runKey({ task: job.item.id, run: job.run })));
  const report = () => buildReport(startedAt, scored, unscored, validation, results, options);
  writeJsonAtomic(options.resultsFile, report());
  await Promise.all(
    jobs.map((job) =>
      limit.run(async () => {
        const result = await runTask(job.item, job.run, options).catch((error: unknown) =>
          harnessFailure(job.item, job.run, error),
        );
        results.push(result);
        writeJsonAtomic(options.resultsFile, report());
        onRun(result);
      }),
    ),
  );
  return report();
}

function buildReport(
  startedAt: string,
  items: EvalItem[],
  unscored: string[],
  validation: Record<string, Validation>,
  results: TaskRun[],
  options: EvalOptions,
): EvalReport {
  // Results keep the item order, then the run order, whatever order runs end in.
  const order = new Map(items.map((item, index) => [item.id, index]));
  const runs = [...results].sort((a, b) => (order.get(a.task) ?? 0) - (order.get(b.task) ?? 0) || a.run - b.run);
  const tasks = items.map((item) => {
    const own = runs.filter((run) => run.task === item.id);
    const complete = own.length === options.runs;
    const passed = own.filter((run) => run.check.passed).length;
    return {
      task: item.id,
      kind: item.kind,
      summary: summarise(own),
      passAt1: complete ? passAtK(options.runs, passed, 1) : null,
      passAtN: complete ? passAtK(options.runs, passed, options.runs) : null,
    };
  });
  const mean = (values: Array<number | null>) => {
    const present = values.filter((value): value is number => value !== null);
    return present.length === 0 ? null : present.reduce((sum, value) => sum + value, 0) / present.length;
  };
  return {
    startedAt,
    suite: options.suite,
    endpoint: options.baseUrl,
    model: options.model ?? null,
    feedback: options.feedback ?? null,
    runsPerTask: options.runs,
    taskTimeoutS: Math.round(options.taskTimeoutMs / 1000),
    tasks,
    overall: summarise(runs),
    passAt: { k1: mean(tasks.map((task) => task.passAt1)), kN: mean(tasks.map((task) => task.passAtN)) },
    validation,
    unscored,
    runs,
  };
}

export function summarise(runs: TaskRun[]): RunsSummary {
  const spread = (pick: (run: TaskRun) => number | null) => spreadOf(runs.map(pick));
  const sum = (pick: (run: TaskRun) => number) => runs.reduce((total, run) => total + pick(run), 0);
  const costs = runs.map((run) => run.cost);
  return {
    runs: runs.length,
    planValid: runs.filter((run) => run.plan.valid).length,
    planFirstTry: runs.filter((run) => run.plan.firstTry).length,
    checkPassed: runs.filter((run) => run.check.passed).length,
    timeLimited: runs.filter((run) => run.failure?.startsWith("time limit") ?? false).length,
    buildInPlan: {
      yes: runs.filter((run) => run.build.inPlan === true).length,
      of: runs.filter((run) => run.build.inPlan !== null).length,
    },
    recall: spread((run) => run.plan.recall),
    precision: spread((run) => run.plan.precision),
    stepsDone: spread((run) => (run.build.ran ? run.build.stepsDone : null)),
    stepsBlocked: spread((run) => (run.build.ran ? run.build.stepsBlocked : null)),
    stepsFailed: spread((run) => (run.build.ran ? run.build.stepsFailed : null)),
    questions: spread((run) => run.questions.plan + run.questions.build),
    requests: spread((run) => run.usage.total.requests),
    turns: {
      plan: spread((run) => run.usage.plan.requests + run.usage.revise.requests),
      build: spread((run) => (run.build.ran ? run.usage.build.requests : null)),
    },
    promptTokens: spread((run) => run.usage.total.prompt),
    cachedTokens: spread((run) => run.usage.total.cached),
    completionTokens: spread((run) => run.usage.total.completion),
    cost: spread((run) => run.cost),
    costByPhase: {
      plan: spread((run) =>
        run.costByPhase.plan === null ? null : run.costByPhase.plan + (run.costByPhase.revise ?? 0),
      ),
      build: spread((run) => (run.build.ran ? run.costByPhase.build : null)),
    },
    seconds: {
      setup: spread((run) => run.seconds.setup),
      plan: spread((run) => run.seconds.plan),
      revise: spread((run) => (run.exitCodes.revise === null ? null : run.seconds.revise)),
      build: spread((run) => (run.build.ran ? run.seconds.build : null)),
      check: spread((run) => (run.check.ran ? run.seconds.check : null)),
      total: spread((run) => run.seconds.total),
    },
    totals: {
      requests: sum((run) => run.usage.total.requests),
      errors: sum((run) => run.usage.total.errors),
      promptTokens: sum((run) => run.usage.total.prompt),
      cachedTokens: sum((run) => run.usage.total.cached),
      completionTokens: sum((run) => run.usage.total.completion),
      cost: costs.some((cost) => cost === null) ? null : costs.reduce<number>((total, cost) => total + (cost ?? 0), 0),
      seconds: sum((run) => run.seconds.total),
    },
  };
}
