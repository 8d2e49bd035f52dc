import { readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";

/** The figures `compare` reads from each report's runs. */
const reportSchema = z.object({
  model: z.string().nullable().optional(),
  runs: z.array(
    z.object({
      task: z.string(),
      check: z.object({ passed: z.boolean() }),
      cost: z.number().nullable(),
      usage: z.object({ total: z.object({ prompt: z.number(), completion: z.number() }) }),
      seconds: z.object({ total: z.number() }),
    }),
  ),
});

interface Side {
  runs: number;
  passed: number;
  cost: number | null;
  tokens: number;
  seconds: number;
}

function readReport(file: string): z.output<typeof reportSchema> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const parsed = reportSchema.safeParse(raw);
  if (!parsed.success)
    throw new Error(
      `${file} is not an eval report (${parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")})`,
    );
  return parsed.data;
}

/**
 * Two reports side by side: per task and in total, success, cost, tokens and time (a task missing from one side reads
 * –).
 */
export function compareReports(fileA: string, fileB: string): string {
  const a = readReport(fileA);
  const b = readReport(fileB);
  const tasks = [...new Set([...a.runs, ...b.runs].map((run) => run.task))];
  const side = (runs: z.output<typeof reportSchema>["runs"]): Side | null =>
    runs.length === 0
      ? null
      : {
          runs: runs.length,
          passed: runs.filter((run) => run.check.passed).length,
          cost: runs.some((run) => run.cost === null) ? null : runs.reduce((sum, run) => sum + (run.cost ?? 0), 0),
          tokens: runs.reduce((sum, run) => sum + run.usage.total.prompt + run.usage.total.completion, 0),
          seconds: runs.reduce((sum, run) => sum + run.seconds.total, 0),
        };
  const row = (name: string, left: Side | null, right: Side | null) =>
    `| ${[name, success(left), success(right), cost(left), cost(right), tokens(left), tokens(right), time(left), time(right)].join(" | ")} |`;
  const nameA = `A (${path.basename(fileA)}${a.model ? `, ${a.model}` : ""})`;
  const nameB = `B (${path.basename(fileB)}${b.model ? `, ${b.model}` : ""})`;
  return [
    `A: ${fileA}${a.model ? ` — model ${a.model}` : ""}`,
    `B: ${fileB}${b.model ? ` — model ${b.model}` : ""}`,
    "",
    "| task | success A | success B | cost A ($) | cost B ($) | tokens A | tokens B | time A (s) | time B (s) |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...tasks.map((task) =>
      row(task, side(a.runs.filter((run) => run.task === task)), side(b.runs.filter((run) => run.task === task))),
    ),
    row("**total**", side(a.runs), side(b.runs)),
    "",
    `${nameA} and ${nameB}: success is runs passed/runs; cost, tokens (prompt + completion) and time add up every run.`,
  ].join("\n");
}

const success = (side: Side | null) => (side ? `${side.passed}/${side.runs}` : "–");
const cost = (side: Side | null) => (side?.cost === null || side === null ? "–" : side.cost.toFixed(4));
const tokens = (side: Side | null) => (side ? side.tokens.toLocaleString("en-US") : "–");
const time = (side: Side | null) => (side ? side.seconds.toFixed(1) : "–");
