import { pathMatcher } from "../../shared/path-glob.js";
import { inlineCode } from "../../plan/render.js";
import type { Plan } from "../../plan/schema.js";
import type { ThreadState } from "../state.js";

/** Files named per step, in the hidden state and the report; the rest are counted. */
const MAX_NAMED = 20;

/**
 * What a step changed beyond what the approved plan said it would: every report and pull request
 * lists it, whatever the approvers setting. A `files` entry is a path from the repository's root:
 * a file, or a directory (`src/` or `src`) covering everything under it; `*` and `?` match within
 * one path segment and `**` across segments (CODEOWNERS' pattern rules, anchored at the root), and
 * `.` is the whole repository. Any step's entries count: work done in an earlier step's files is
 * inside the plan.
 */
export function outsidePlan(plan: Plan, files: string[]): { files: string[]; total: number } | undefined {
  const patterns = plan.steps.flatMap((step) => step.files).flatMap(entryPattern);
  const outside = files.filter((file) => !patterns.some((matches) => matches(file)));
  return outside.length > 0 ? { files: outside.slice(0, MAX_NAMED), total: outside.length } : undefined;
}

/** The report's lines for the steps that changed files outside the plan, or null when none did. */
export function renderOutsidePlan(plan: Plan, state: ThreadState): string | null {
  const lines = plan.steps.flatMap((step) => {
    const outside = state.steps[step.id]?.outsidePlan;
    if (!outside) return [];
    const more = outside.total > outside.files.length ? `, and ${outside.total - outside.files.length} more` : "";
    return [
      `- **${step.id}** outside the plan: ${outside.files.map((file) => `\`${inlineCode(file)}\``).join(", ")}${more}`,
    ];
  });
  if (lines.length === 0) return null;
  return ["**Changed outside the plan's files** (no step of the plan lists them):", ...lines].join("\n");
}

function entryPattern(entry: string): Array<(path: string) => boolean> {
  const path = entry.trim().replace(/^(?:\.\/)+/, "");
  if (path === ".") return [() => true];
  return path === "" ? [] : [pathMatcher(`/${path}`)];
}
