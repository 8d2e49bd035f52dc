import { renderPlanComment } from "../../src/github/plan-comment.js";
import { planHash } from "../../src/plan/hash.js";
import { validatePlan } from "../../src/plan/validate.js";
import type { ThreadState } from "../../src/workflow/state.js";

/** A pending plan's state, as /plan would have left it. */
export function pendingState(rawPlan: unknown, overrides: Partial<ThreadState> = {}): ThreadState {
  const checked = validatePlan(rawPlan);
  if (!checked.ok) throw new Error(checked.errors.join("; "));
  const plan = checked.plan;
  return {
    v: 1,
    status: "pending",
    revision: 1,
    plan,
    planHash: planHash(plan),
    requestedBy: "maintainer",
    instructions: "",
    base: { branch: "main", sha: "" },
    head: null,
    branch: null,
    steps: Object.fromEntries(plan.steps.map((step) => [step.id, { status: "pending" as const }])),
    stale: null,
    question: null,
    error: null,
    pullRequest: null,
    explored: ["src/client.js"],
    updatedAt: new Date().toISOString(),
    ...overrides,
  };
}

export function planCommentBody(state: ThreadState): string {
  return renderPlanComment(state);
}
