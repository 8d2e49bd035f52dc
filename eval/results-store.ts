import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { z } from "zod";
import type { TaskRun } from "./run-task.js";
import type { Validation } from "./judge.js";

/** What --resume needs from an earlier report: its runs (by task and run number) and its validations. */
const resultsSchema = z.object({
  runs: z.array(z.object({ task: z.string(), run: z.number().int().positive() }).passthrough()),
  validation: z
    .record(z.string(), z.object({ ok: z.boolean(), problems: z.array(z.string()), durationMs: z.number() }))
    .default({}),
});

export interface StoredResults {
  runs: TaskRun[];
  validation: Record<string, Validation>;
}

/**
 * Written whole to a temporary file and renamed over the old one: a run killed midway leaves the
 * previous complete file, never half of one.
 */
export function writeJsonAtomic(file: string, value: unknown): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(temporary, file);
}

/** An earlier report to resume; a file that is not one is an error, so no run is silently repeated. */
export function readResults(file: string): StoredResults {
  if (!existsSync(file)) throw new Error(`--resume ${file}: no such file`);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`--resume ${file}: not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  const parsed = resultsSchema.safeParse(raw);
  if (!parsed.success)
    throw new Error(
      `--resume ${file}: not an eval report (${parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")})`,
    );
  // The runs are the harness's own output, checked for what resuming relies on (task and run number).
  return { runs: parsed.data.runs as unknown as TaskRun[], validation: parsed.data.validation };
}

export const runKey = (run: { task: string; run: number }): string => `${run.task}#${run.run}`;
