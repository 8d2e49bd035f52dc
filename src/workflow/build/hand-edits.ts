import { planHash } from "../../plan/hash.js";
import { inlineCode } from "../../plan/render.js";
import type { Plan } from "../../plan/schema.js";
import { validatePlan } from "../../plan/validate.js";
import { readVisibleSteps } from "../../plan/visible.js";
import type { ThreadState } from "../state.js";

export type HandEdits =
  | { kind: "none" }
  /** `unticked`: steps done before that a person unticked so they are built again. */
  | { kind: "edited"; state: ThreadState; notes: string[]; unticked: string[] }
  | { kind: "broken"; errors: string[] };

/**
 * The plan as the comment now reads: a person may have reworded, removed or added steps, changed
 * "after …" dependencies or the files a step names, or ticked/unticked boxes. The result is
 * validated like a model's plan. What people see wins over the hidden state.
 */
export function applyHandEdits(body: string, state: ThreadState): HandEdits {
  const plan = state.plan;
  if (!plan) return { kind: "none" };
  const visible = readVisibleSteps(body);
  const notes: string[] = [];
  const steps: Plan["steps"] = [];
  const progress: ThreadState["steps"] = {};
  const unticked: string[] = [];

  for (const line of visible) {
    const original = plan.steps.find((step) => step.id === line.id);
    if (!original) notes.push(`${line.id} was added by hand.`);
    else if (line.title !== original.title.replace(/\s+/g, " ").trim()) notes.push(`${line.id} was reworded by hand.`);
    if (original && [...line.deps].sort().join() !== [...original.deps].sort().join())
      notes.push(`${line.id}'s dependencies were changed by hand.`);
    // Files are compared as the line shows them; unchanged ones keep their exact names from the plan.
    const filesEdited = original !== undefined && line.files.join("\n") !== original.files.map(inlineCode).join("\n");
    if (filesEdited) notes.push(`${line.id}'s files were changed by hand.`);
    const files = original && !filesEdited ? original.files : line.files;
    steps.push({
      ...(original ?? { details: "", risk: undefined, complexity: undefined }),
      id: line.id,
      title: line.title,
      deps: line.deps,
      files,
    });

    const was = state.steps[line.id] ?? { status: "pending" as const };
    if (line.ticked && was.status !== "done") {
      progress[line.id] = { status: "done", tickedByHand: true };
      notes.push(`${line.id} was ticked by hand, so it is treated as done and skipped.`);
    } else if (!line.ticked && was.status === "done") {
      progress[line.id] = { status: "pending" };
      unticked.push(line.id);
      notes.push(`${line.id} was unticked by hand, so it will be built again.`);
    } else {
      progress[line.id] = was;
    }
  }
  for (const step of plan.steps)
    if (!visible.some((line) => line.id === step.id)) notes.push(`${step.id} was removed by hand.`);

  if (notes.length === 0) return { kind: "none" };
  const checked = validatePlan({ ...plan, steps });
  if (!checked.ok) return { kind: "broken", errors: checked.errors };
  return {
    kind: "edited",
    state: { ...state, plan: checked.plan, planHash: planHash(checked.plan), steps: progress },
    notes,
    unticked,
  };
}
