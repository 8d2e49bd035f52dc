import { neutraliseComments, oneLine, renderTaskItem } from "../plan/render.js";
import type { Plan, PlanStep } from "../plan/schema.js";
import type { FollowUpState, FollowUpStep, ThreadState } from "../workflow/state.js";

const STATUS: Record<FollowUpState["status"], string> = {
  pending: "⏸ waiting for `/fix` to build the steps below",
  building: "⏳ building",
  built: "✅ built",
  failed: "❌ stopped",
  cancelled: "⏹️ cancelled",
};

/**
 * The plan comment's `Follow-up` section: the fix-up steps built on the pull request's branch after the plan, as a task
 * list like the plan's own steps, with what they cost.
 */
export function renderFollowUpSection(followUp: FollowUpState, progress: ThreadState["steps"]): string {
  const status = `${STATUS[followUp.status]}${followUp.error ? `: ${oneLine(followUp.error)}` : ""}`;
  const lines = [
    "### Follow-up",
    `Review threads and \`/fix\` on #${followUp.pullRequest}, built on the same branch — ${status}.`,
  ];
  if (followUp.steps.length > 0)
    lines.push(followUp.steps.map((step) => renderTaskItem(asPlanStep(step), progress[step.id])).join("\n"));
  if (followUp.cost) lines.push(`<sub>Follow-up cost so far: ${followUp.cost}.</sub>`);
  return neutraliseComments(lines.join("\n\n"));
}

/** An F-step as the build's machinery takes a step (no risk or complexity of its own). */
export function asPlanStep(step: FollowUpStep): PlanStep {
  return {
    id: step.id,
    title: step.title,
    details: step.details,
    files: step.files,
    deps: [],
    risk: undefined,
    complexity: undefined,
  };
}

/** The plan with its F-steps after its own: what the build check, the report and each step's agent see. */
export function withFollowUpSteps(plan: Plan, followUp: FollowUpState): Plan {
  return { ...plan, steps: [...plan.steps, ...followUp.steps.map(asPlanStep)] };
}
