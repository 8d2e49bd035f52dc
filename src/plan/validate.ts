import path from "node:path";
import { z } from "zod";
import { planSchema, type Plan } from "./schema.js";

export const MAX_STEPS = 30;
/** Longest file path taken from the model; checked first, since normalising a long "../" chain is quadratic. */
export const MAX_PATH_LENGTH = 4096;

export type PlanValidation = { ok: true; plan: Plan } | { ok: false; errors: string[] };

/** Checks what a schema cannot: ids, dependencies, cycles, step count and file paths. */
export function validatePlan(input: unknown): PlanValidation {
  const parsed = planSchema.safeParse(input);
  if (!parsed.success) return { ok: false, errors: describeZodIssues(parsed.error) };
  const plan = parsed.data;
  const errors: string[] = [];

  if (plan.steps.length < 1) errors.push("the plan needs at least one step");
  if (plan.steps.length > MAX_STEPS)
    errors.push(`the plan has ${plan.steps.length} steps; at most ${MAX_STEPS} are allowed`);

  const ids = new Set<string>();
  for (const step of plan.steps) {
    if (ids.has(step.id)) errors.push(`step id ${step.id} is used more than once; ids must be unique`);
    ids.add(step.id);
  }
  for (const step of plan.steps) {
    for (const dep of step.deps) {
      if (dep === step.id) errors.push(`step ${step.id} depends on itself`);
      else if (!ids.has(dep)) errors.push(`step ${step.id} depends on ${dep}, which is not a step of this plan`);
    }
    for (const file of step.files) {
      const problem = checkRepoRelativePath(file);
      if (problem) errors.push(`step ${step.id}: file ${quotePath(file)} ${problem}`);
    }
  }
  const cycle = findCycle(plan);
  if (cycle) errors.push(`the dependencies form a cycle: ${cycle.join(" → ")}`);

  return errors.length > 0 ? { ok: false, errors } : { ok: true, plan };
}

/** Returns why a path is not a relative path inside the repository, or null when it is. */
export function checkRepoRelativePath(file: string): string | null {
  if (file.length > MAX_PATH_LENGTH) return tooLong(file);
  if (file.includes("\0")) return "contains a NUL character";
  const absolute = absolutePathProblem(file);
  if (absolute) return absolute;
  const normalised = path.posix.normalize(file.replaceAll("\\", "/"));
  if (normalised === ".." || normalised.startsWith("../")) return "leaves the repository";
  if (normalised === ".git" || normalised.startsWith(".git/")) return "is inside .git/";
  return null;
}

/** The refusal for a path over MAX_PATH_LENGTH: says how long it is, never echoes it whole. */
export function tooLong(file: string): string {
  return `is too long (${file.length} characters; at most ${MAX_PATH_LENGTH} are allowed); use a short path relative to the repository root`;
}

/**
 * Why a path is absolute, or null. Backslashes count as separators (as the tools read them), so
 * `\etc\passwd`, `\\server\share` and drive paths like `C:\x` or `C:x` are absolute too.
 */
export function absolutePathProblem(file: string): string | null {
  if (/^[a-zA-Z]:/.test(file) || file.startsWith("\\")) {
    return 'is absolute (a Windows drive or backslash path); use a path relative to the repository root with forward slashes, like "src/index.ts"';
  }
  if (path.isAbsolute(file) || file === "~" || file.startsWith("~/"))
    return "is absolute; use a path relative to the repository root";
  return null;
}

/** A path for an error message: quoted, and cut short when long so the message stays readable. */
export function quotePath(file: string): string {
  return `"${file.length > 120 ? `${file.slice(0, 100)}…` : file}"`;
}

/** A dependency cycle as a list of ids (first id repeated at the end), or null. */
export function findCycle(plan: Plan): string[] | null {
  const deps = new Map(plan.steps.map((step) => [step.id, step.deps]));
  const state = new Map<string, "visiting" | "done">();
  const trail: string[] = [];
  const visit = (id: string): string[] | null => {
    const seen = state.get(id);
    if (seen === "done") return null;
    if (seen === "visiting") return [...trail.slice(trail.indexOf(id)), id];
    state.set(id, "visiting");
    trail.push(id);
    for (const dep of deps.get(id) ?? []) {
      if (!deps.has(dep)) continue;
      const cycle = visit(dep);
      if (cycle) return cycle;
    }
    trail.pop();
    state.set(id, "done");
    return null;
  };
  for (const id of deps.keys()) {
    const cycle = visit(id);
    if (cycle) return cycle;
  }
  return null;
}

export function describeZodIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const where = issue.path.length > 0 ? issue.path.join(".") : "arguments";
    return `${where}: ${issue.message}`;
  });
}
