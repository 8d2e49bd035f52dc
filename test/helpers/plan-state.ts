import { inflateRawSync } from "node:zlib";
import { renderPlanComment } from "../../src/github/plan-comment.js";
import { deriveStateKey, type CommentSeal } from "../../src/github/state-marker.js";
import { planHash } from "../../src/plan/hash.js";
import { validatePlan } from "../../src/plan/validate.js";
import type { z } from "zod";
import { threadStateSchema, type ThreadState } from "../../src/workflow/state.js";

/** A pending plan's state, as /plan would have left it (parsed, so the fields it leaves out take their defaults). */
export function pendingState(rawPlan: unknown, overrides: Partial<ThreadState> = {}): ThreadState {
  const checked = validatePlan(rawPlan);
  if (!checked.ok) throw new Error(checked.errors.join("; "));
  const plan = checked.plan;
  const state: z.input<typeof threadStateSchema> = {
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
    followUp: null,
    explored: ["src/client.js"],
    approvals: [],
    buildDeliveries: [],
    updatedAt: new Date().toISOString(),
    ...overrides,
  };
  return threadStateSchema.parse(state);
}

/** The secret the test App and Action run with, and the state key they derive from it. */
export const TEST_STATE_SECRET = "test-webhook-secret";
export const TEST_STATE_KEY = deriveStateKey(TEST_STATE_SECRET);

/** The seal for one comment of the test thread (Codertocat/Hello-World#1 unless told). */
export function testSeal(comment: number, thread = 1, repository = "Codertocat/Hello-World"): CommentSeal {
  return { key: TEST_STATE_KEY, repository, thread, comment };
}

/** A plan comment, signed for the comment `seal` names. */
export function planCommentBody(state: ThreadState, seal: CommentSeal): string {
  return renderPlanComment(state, seal);
}

/** The state a marker holds, decoded without checking who signed it: for tests that look at what was written. */
export function decodeState(body: string): ThreadState {
  const match = [...body.matchAll(/<!-- blueprint:state v2\.([A-Za-z0-9_-]*)\.[A-Za-z0-9_-]* -->/g)].at(-1);
  if (!match) throw new Error("no state marker");
  return JSON.parse(inflateRawSync(Buffer.from(match[1] ?? "", "base64url")).toString("utf8")) as ThreadState;
}
