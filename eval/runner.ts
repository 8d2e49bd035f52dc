import { harnessFailure, runTask, type RunSettings, type TaskRun } from "./run-task.js";
import { spreadOf, type Spread } from "./scoring.js";
import type { EvalTask } from "./task-suite.js";
import { Semaphore } from "../src/workspace/repo-cache.js";

export interface EvalOptions extends RunSettings {
  runs: number;
  concurrency: number;
}

/** What a set of runs (one task's, or all of them) adds up to. */
export interface RunsSummary {
  runs: number;
  planValid: number;
  checkPassed: number;
  recall: Spread | null;
  precision: Spread | null;
  stepsDone: Spread | null;
  stepsBlocked: Spread | null;
  stepsFailed: Spread | null;
  questions: Spread | null;
  requests: Spread | null;
  promptTokens: Spread | null;
  cachedTokens: Spread | null;
  completionTokens: Spread | null;
  cost: Spread | null;
  seconds: { plan: Spread | null; revise: Spread | null; build: Spread | null; check: Spread | null; total: Spread | null };
  /** Sums over the runs, for the bill. */
  totals: { requests: number; errors: number; promptTokens: number; cachedTokens: number; completionTokens: number; cost: number | null; seconds: number };
}

export interface EvalReport {
  startedAt: string;
  endpoint: string;
  model: string | null;
  feedback: string | null;
  runsPerTask: number;
  tasks: Array<{ task: string; package: string; from: string; to: string; summary: RunsSummary }>;
  overall: RunsSummary;
  runs: TaskRun[];
}

/** Every task `runs` times, at most `concurrency` at once; one run failing to start is reported, not fatal. */
export async function runEval(tasks: EvalTask[], options: EvalOptions, onRun: (run: TaskRun) => void = () => {}): Promise<EvalReport> {
  const startedAt = new Date().toISOString();
  const jobs = tasks.flatMap((task) => Array.from({ length: options.runs }, (_, index) => ({ task, run: index + 1 })));
  // At most `concurrency` runs at once; results keep the task order, whatever order runs end in.
  const limit = new Semaphore(Math.max(1, options.concurrency));
  const results = await Promise.all(
    jobs.map((job) =>
      limit.run(async () => {
        const result = await runTask(job.task, job.run, options).catch((error: unknown) => harnessFailure(job.task, job.run, error));
        onRun(result);
        return result;
      }),
    ),
  );
  return {
    startedAt,
    endpoint: options.baseUrl,
    model: options.model ?? null,
    feedback: options.feedback ?? null,
    runsPerTask: options.runs,
    tasks: tasks.map((task) => ({
      task: task.id,
      package: task.meta.package,
      from: task.meta.from,
      to: task.meta.to,
      summary: summarise(results.filter((run) => run.task === task.id)),
    })),
    overall: summarise(results),
    runs: results,
  };
}

export function summarise(runs: TaskRun[]): RunsSummary {
  const spread = (pick: (run: TaskRun) => number | null) => spreadOf(runs.map(pick));
  const sum = (pick: (run: TaskRun) => number) => runs.reduce((total, run) => total + pick(run), 0);
  const costs = runs.map((run) => run.cost);
  return {
    runs: runs.length,
    planValid: runs.filter((run) => run.plan.valid).length,
    checkPassed: runs.filter((run) => run.check.passed).length,
    recall: spread((run) => run.plan.recall),
    precision: spread((run) => run.plan.precision),
    stepsDone: spread((run) => (run.build.ran ? run.build.stepsDone : null)),
    stepsBlocked: spread((run) => (run.build.ran ? run.build.stepsBlocked : null)),
    stepsFailed: spread((run) => (run.build.ran ? run.build.stepsFailed : null)),
    questions: spread((run) => run.questions.plan + run.questions.build),
    requests: spread((run) => run.usage.total.requests),
    promptTokens: spread((run) => run.usage.total.prompt),
    cachedTokens: spread((run) => run.usage.total.cached),
    completionTokens: spread((run) => run.usage.total.completion),
    cost: spread((run) => run.cost),
    seconds: {
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
