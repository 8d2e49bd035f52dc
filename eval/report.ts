import type { EvalReport, RunsSummary } from "./runner.js";
import type { Spread } from "./scoring.js";

/** What happened: the verdict, and the plan's and the build's quality. */
const QUALITY_COLUMNS = [
  "task",
  "passed",
  "plan valid",
  "first try",
  "files recall",
  "files precision",
  "in plan",
  "steps done",
  "steps blocked",
  "steps failed",
  "questions",
] as const;
/** What it took: model turns, tokens, dollars and seconds, per phase where it matters. */
const SPEND_COLUMNS = [
  "task",
  "plan turns",
  "build turns",
  "prompt tokens",
  "cached tokens",
  "completion tokens",
  "plan $",
  "build $",
  "cost ($)",
  "setup s",
  "plan s",
  "revise s",
  "build s",
  "check s",
] as const;

/** The report as two markdown tables (quality, then spend): one row per task, then all runs together. */
export function renderMarkdown(report: EvalReport): string {
  const lines = [
    `# Blueprint eval — ${report.startedAt}`,
    "",
    `Suite ${report.suite}. Endpoint ${report.endpoint}, model ${report.model ?? "(the CLI's default)"}, ${report.runsPerTask} run${report.runsPerTask === 1 ? "" : "s"} per task, ${report.taskTimeoutS} s per run at most${report.feedback ? `, one revise round: "${report.feedback}"` : ""}.`,
    report.runsPerTask > 1 ? "Figures over several runs read median (min–max); counts read passed/runs." : "",
    "",
    ...table(QUALITY_COLUMNS, report, quality),
    "",
    ...table(SPEND_COLUMNS, report, spend),
    "",
    totalsLine(report.overall),
    report.passAt.k1 === null
      ? ""
      : `pass@1 ${percent(report.passAt.k1)}${report.runsPerTask > 1 && report.passAt.kN !== null ? `, pass@${report.runsPerTask} ${percent(report.passAt.kN)}` : ""} (mean over the tasks of the unbiased estimator, as in the Codex paper).`,
  ];
  if (report.unscored.length > 0)
    lines.push(
      "",
      `Not scored (failed validation): ${report.unscored.map((id) => `${id} (${report.validation[id]?.problems.join("; ") ?? "?"})`).join(", ")}.`,
    );
  const failed = report.runs.filter((run) => run.failure !== null);
  if (failed.length > 0)
    lines.push(
      "",
      "Runs that failed for a stated reason:",
      ...failed.map((run) => `- ${run.task} run ${run.run}: ${run.failure}`),
    );
  const isolation = new Set(report.runs.map((run) => run.check.isolation).filter((value) => value !== null));
  if (isolation.size > 0)
    lines.push(
      "",
      isolation.has("plain")
        ? "Hidden checks ran without a sandbox (bubblewrap unavailable or BLUEPRINT_SANDBOX=none)."
        : "Hidden checks ran inside bubblewrap.",
    );
  const failures = report.runs.filter((run) => run.error !== null);
  if (failures.length > 0)
    lines.push(
      "",
      "Runs the harness could not complete:",
      ...failures.map((run) => `- ${run.task} run ${run.run}: ${run.error}`),
    );
  return `${lines.filter((line, index, all) => !(line === "" && all[index - 1] === "")).join("\n")}\n`;
}

function table(columns: readonly string[], report: EvalReport, cells: (summary: RunsSummary) => string[]): string[] {
  const line = (name: string, summary: RunsSummary) => `| ${[name, ...cells(summary)].join(" | ")} |`;
  return [
    `| ${columns.join(" | ")} |`,
    `| ${columns.map((_, index) => (index === 0 ? "---" : "---:")).join(" | ")} |`,
    ...report.tasks.map((entry) => line(entry.task, entry.summary)),
    line("**all**", report.overall),
  ];
}

function quality(summary: RunsSummary): string[] {
  return [
    count(summary.checkPassed, summary.runs),
    count(summary.planValid, summary.runs),
    count(summary.planFirstTry, summary.runs),
    figure(summary.recall, 2),
    figure(summary.precision, 2),
    summary.buildInPlan.of === 0 ? "–" : count(summary.buildInPlan.yes, summary.buildInPlan.of),
    figure(summary.stepsDone, 0),
    figure(summary.stepsBlocked, 0),
    figure(summary.stepsFailed, 0),
    figure(summary.questions, 0),
  ];
}

function spend(summary: RunsSummary): string[] {
  return [
    figure(summary.turns.plan, 0),
    figure(summary.turns.build, 0),
    figure(summary.promptTokens, 0),
    figure(summary.cachedTokens, 0),
    figure(summary.completionTokens, 0),
    figure(summary.costByPhase.plan, 4),
    figure(summary.costByPhase.build, 4),
    figure(summary.cost, 4),
    figure(summary.seconds.setup, 1),
    figure(summary.seconds.plan, 1),
    figure(summary.seconds.revise, 1),
    figure(summary.seconds.build, 1),
    figure(summary.seconds.check, 1),
  ];
}

function count(yes: number, runs: number): string {
  if (runs === 1) return yes === 1 ? "yes" : "no";
  return `${yes}/${runs}`;
}

/** One value as it is; several as median (min–max). */
export function figure(spread: Spread | null, digits: number): string {
  if (!spread) return "–";
  const format = (value: number) => (digits === 0 ? Math.round(value).toLocaleString("en-US") : value.toFixed(digits));
  if (spread.n === 1 || spread.min === spread.max) return format(spread.median);
  return `${format(spread.median)} (${format(spread.min)}–${format(spread.max)})`;
}

function totalsLine(summary: RunsSummary): string {
  const { totals } = summary;
  const format = (value: number) => value.toLocaleString("en-US");
  return [
    `Totals over ${summary.runs} run${summary.runs === 1 ? "" : "s"}: ${summary.checkPassed} passed${summary.timeLimited > 0 ? ` (${summary.timeLimited} stopped by the time limit)` : ""};`,
    `${format(totals.requests)} model requests (${format(totals.errors)} failed),`,
    `${format(totals.promptTokens)} prompt tokens (${format(totals.cachedTokens)} cached) + ${format(totals.completionTokens)} completion tokens,`,
    totals.cost === null ? "cost not computed (no prices given)," : `$${totals.cost.toFixed(4)},`,
    `${totals.seconds.toFixed(1)} s of run time.`,
  ].join(" ");
}

function percent(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}

/** --validate's table: one row per task. */
export function renderValidation(
  results: Array<{ id: string; ok: boolean; problems: string[]; durationMs: number }>,
): string {
  const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\s+/g, " ");
  return [
    "| task | ok | problems | s |",
    "| --- | --- | --- | ---: |",
    ...results.map(
      (result) =>
        `| ${result.id} | ${result.ok ? "yes" : "no"} | ${cell(result.problems.join("; ")) || "–"} | ${(result.durationMs / 1000).toFixed(1)} |`,
    ),
    "",
    `${results.filter((result) => result.ok).length} of ${results.length} valid.`,
  ].join("\n");
}
