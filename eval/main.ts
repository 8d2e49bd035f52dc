import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { EVAL_USAGE, EvalUsageError, parseEvalArgs } from "./args.js";
import { renderMarkdown } from "./report.js";
import { runEval, type EvalReport } from "./runner.js";
import { loadTasks, SMOKE_DIR } from "./task-suite.js";

export interface EvalIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

export const DEFAULT_OUT_DIR = path.resolve(import.meta.dirname, "results");

/** `npm run eval`: arguments → runs → report files; returns the exit status and, when it ran, the report. */
export async function main(argv: string[], env: NodeJS.ProcessEnv, io: EvalIo, tasksDir: string = SMOKE_DIR): Promise<{ exitCode: number; report: EvalReport | null }> {
  // 1. What was asked, and which tasks.
  let args;
  let tasks;
  try {
    args = parseEvalArgs(argv, env, DEFAULT_OUT_DIR);
    if (args.help) {
      io.stdout(EVAL_USAGE);
      return { exitCode: 0, report: null };
    }
    tasks = loadTasks(tasksDir, args.tasks);
  } catch (error) {
    io.stderr(`eval: ${error instanceof Error ? error.message : String(error)}${error instanceof EvalUsageError ? "\nRun `npm run eval -- --help` for usage." : ""}`);
    return { exitCode: 2, report: null };
  }

  // 2. The runs, each logged to its own file.
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const logDir = path.join(args.outDir, stamp);
  io.stderr(`eval: ${tasks.length} task${tasks.length === 1 ? "" : "s"} × ${args.runs} run${args.runs === 1 ? "" : "s"} against ${args.baseUrl}; logs in ${logDir}`);
  const report = await runEval(
    tasks,
    { ...args, logDir, env: cliEnvironment(env) },
    (run) =>
      io.stderr(
        `eval: ${run.task} run ${run.run}: plan ${run.plan.valid ? "valid" : "invalid"}, hidden check ${run.check.passed ? "passed" : "failed"}, ${run.usage.total.requests} requests${run.usage.total.errors > 0 ? ` (+${run.usage.total.errors} failed)` : ""}, ${run.seconds.total.toFixed(1)} s${run.error ? ` (harness error: ${run.error})` : ""}`,
      ),
  );

  // 3. The report: printed, and written as JSON and Markdown.
  mkdirSync(args.outDir, { recursive: true });
  const markdown = renderMarkdown(report);
  const base = path.join(args.outDir, `eval-${stamp}`);
  writeFileSync(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(`${base}.md`, markdown);
  io.stdout(markdown);
  io.stderr(`eval: wrote ${base}.json and ${base}.md`);
  const { totals } = report.overall;
  if (totals.requests === 0 && totals.errors > 0) io.stderr(`eval: the model endpoint ${args.baseUrl} answered none of ${totals.errors} requests; the runs' logs say why.`);
  const broken = report.runs.some((run) => run.error !== null) || (totals.requests === 0 && totals.errors > 0);
  return { exitCode: broken ? 1 : 0, report };
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
