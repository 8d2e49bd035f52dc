import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";

/** `task.json`: where a task comes from, the files its real change touched, and how its hidden check runs. */
const taskMetaSchema = z.object({
  package: z.string().min(1),
  license: z.string().min(1),
  /** The published version the snapshot is taken from, and the one that made the change. */
  from: z.string().min(1),
  to: z.string().min(1),
  kind: z.enum(["bugfix", "feature"]),
  /** The later version's changelog entry for the change (not shown to the agent). */
  changelog: z.string().min(1),
  /** Code files the real change touched (paths in the snapshot); `solution/` holds them as published. */
  changedFiles: z.array(z.string().min(1)).min(1),
  check: z.object({
    /** argv run in the tree's root, after `check/` is copied to `.eval-check/`. */
    command: z.array(z.string().min(1)).min(1),
    /** `upstream`: the later version's own tests; `written`: written from the published behaviour change. */
    source: z.enum(["upstream", "written"]),
    note: z.string().min(1),
  }),
});

export type TaskMeta = z.output<typeof taskMetaSchema>;

export interface EvalTask {
  id: string;
  dir: string;
  meta: TaskMeta;
  /** The issue as a user would report it: what the agent is asked to do. */
  issue: string;
  /** Snapshot of the earlier version, the hidden check, and the real change. */
  repoDir: string;
  checkDir: string;
  solutionDir: string;
}

export const SMOKE_DIR = path.resolve(import.meta.dirname, "suites/smoke");

/** The suite's tasks in name order; `only` picks some by id (an unknown id is an error, not a silent skip). */
export function loadTasks(dir: string = SMOKE_DIR, only?: string[]): EvalTask[] {
  const ids = readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  const unknown = (only ?? []).filter((id) => !ids.includes(id));
  if (unknown.length > 0) throw new Error(`unknown task${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")} (the suite has: ${ids.join(", ")})`);
  return ids.filter((id) => !only || only.includes(id)).map((id) => loadTask(path.join(dir, id)));
}

export function loadTask(dir: string): EvalTask {
  const id = path.basename(dir);
  const metaFile = path.join(dir, "task.json");
  const parsed = taskMetaSchema.safeParse(JSON.parse(readFileSync(metaFile, "utf8")));
  if (!parsed.success) throw new Error(`${metaFile}: ${parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}`);
  const task: EvalTask = {
    id,
    dir,
    meta: parsed.data,
    issue: readFileSync(path.join(dir, "issue.md"), "utf8").trim(),
    repoDir: path.join(dir, "repo"),
    checkDir: path.join(dir, "check"),
    solutionDir: path.join(dir, "solution"),
  };
  for (const needed of [task.repoDir, task.checkDir, task.solutionDir]) {
    if (!existsSync(needed)) throw new Error(`task ${id} has no ${path.basename(needed)}/ folder`);
  }
  return task;
}
