import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";

/** `task.json`: which published change the task is, the files it touched, and how its hidden check runs. */
const taskMetaSchema = z
  .object({
    /** The package on the npm registry; its tarballs are fetched when the task runs, never committed here. */
    package: z.string().min(1),
    license: z.string().min(1),
    /** The published version the task starts from, and the one that made the change. */
    from: z.string().min(1),
    to: z.string().min(1),
    kind: z.enum(["bugfix", "feature"]),
    /** The later version's changelog entry for the change (not shown to the agent). */
    changelog: z.string().min(1),
    /** Code files the real change touched (paths in the package): the gold patch is their diff between the versions. */
    changedFiles: z.array(z.string().min(1)).min(1),
    check: z.object({
      /** argv run in the tree's root, after the check's files are copied to `.eval-check/`. */
      command: z.array(z.string().min(1)).min(1),
      /** `upstream`: the later version's own tests; `written`: written from the published behaviour change. */
      source: z.enum(["upstream", "written"]),
      /**
       * Test files of the later version's tarball (paths in it) copied into `.eval-check/` by name, beside `check/`'s
       * own files.
       */
      upstream: z.array(z.string().min(1)).optional(),
      note: z.string().min(1),
    }),
  })
  .refine((meta) => (meta.check.source === "upstream") === (meta.check.upstream ?? []).length > 0, {
    message:
      'a check with "source": "upstream" names the later version\'s test files in check.upstream, and only such a check does',
    path: ["check", "upstream"],
  })
  .refine(
    (meta) =>
      new Set((meta.check.upstream ?? []).map((file) => path.basename(file))).size ===
      (meta.check.upstream ?? []).length,
    {
      message: "the files of check.upstream land in .eval-check/ by name: their names must differ",
      path: ["check", "upstream"],
    },
  );

export type TaskMeta = z.output<typeof taskMetaSchema>;

export interface EvalTask {
  id: string;
  dir: string;
  meta: TaskMeta;
  /** The issue as a user would report it: what the agent is asked to do. */
  issue: string;
  /** The hidden check's own files (ours), or null when it is made of the later version's tests alone. */
  checkDir: string | null;
}

export const SMOKE_DIR = path.resolve(import.meta.dirname, "suites/smoke");

/** The suite's tasks in name order; `only` picks some by id (an unknown id is an error, not a silent skip). */
export function loadTasks(dir: string = SMOKE_DIR, only?: string[]): EvalTask[] {
  const ids = readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  const unknown = (only ?? []).filter((id) => !ids.includes(id));
  if (unknown.length > 0)
    throw new Error(
      `unknown task${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")} (the suite has: ${ids.join(", ")})`,
    );
  return ids.filter((id) => !only || only.includes(id)).map((id) => loadTask(path.join(dir, id)));
}

export function loadTask(dir: string): EvalTask {
  const id = path.basename(dir);
  const metaFile = path.join(dir, "task.json");
  const parsed = taskMetaSchema.safeParse(JSON.parse(readFileSync(metaFile, "utf8")));
  if (!parsed.success)
    throw new Error(
      `${metaFile}: ${parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}`,
    );
  const checkDir = path.join(dir, "check");
  if (!existsSync(checkDir) && !parsed.data.check.upstream)
    throw new Error(`task ${id} has no check/ folder and takes no test files from the later version (check.upstream)`);
  return {
    id,
    dir,
    meta: parsed.data,
    issue: readFileSync(path.join(dir, "issue.md"), "utf8").trim(),
    checkDir: existsSync(checkDir) ? checkDir : null,
  };
}
