import { planHash } from "../plan/hash.js";
import type { Plan } from "../plan/schema.js";
import { validatePlan } from "../plan/validate.js";
import { readVisibleSteps } from "../plan/visible.js";
import type { ThreadState } from "./state.js";

export type HandEdits =
  | { kind: "none" }
  | { kind: "edited"; state: ThreadState; notes: string[] }
  | { kind: "broken"; errors: string[] };

/**
 * The plan as the comment now reads: a person may have reworded, removed or added steps, changed
 * "after …" dependencies, or ticked/unticked boxes. The result is validated like a model's plan.
 */
export function applyHandEdits(body: string, state: ThreadState): HandEdits {
  const plan = state.plan;
  if (!plan) return { kind: "none" };
  const visible = readVisibleSteps(body);
  const notes: string[] = [];
  const steps: Plan["steps"] = [];
  const progress: ThreadState["steps"] = {};

  for (const line of visible) {
    const original = plan.steps.find((step) => step.id === line.id);
    if (!original) notes.push(`${line.id} was added by hand.`);
    else if (line.title !== original.title.replace(/\s+/g, " ").trim()) notes.push(`${line.id} was reworded by hand.`);
    if (original && [...line.deps].sort().join() !== [...original.deps].sort().join()) notes.push(`${line.id}'s dependencies were changed by hand.`);
    steps.push({ ...(original ?? { details: "", files: [], risk: undefined, complexity: undefined }), id: line.id, title: line.title, deps: line.deps });

    const was = state.steps[line.id] ?? { status: "pending" as const };
    if (line.ticked && was.status !== "done") {
      progress[line.id] = { status: "done", tickedByHand: true };
      notes.push(`${line.id} was ticked by hand, so it is treated as done and skipped.`);
    } else if (!line.ticked && was.status === "done") {
      progress[line.id] = { status: "pending" };
      notes.push(`${line.id} was unticked by hand, so it will be built again.`);
    } else {
      progress[line.id] = was;
    }
  }
  for (const step of plan.steps) if (!visible.some((line) => line.id === step.id)) notes.push(`${step.id} was removed by hand.`);

  if (notes.length === 0) return { kind: "none" };
  const checked = validatePlan({ ...plan, steps });
  if (!checked.ok) return { kind: "broken", errors: checked.errors };
  return { kind: "edited", state: { ...state, plan: checked.plan, planHash: planHash(checked.plan), steps: progress }, notes };
}
