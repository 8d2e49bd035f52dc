import type { AgentOutcome } from "../../agent/loop.js";
import { renderPlanComment, renderStatusComment, type ThreadStateRecord } from "../../github/plan-comment.js";
import type { CommentSeal } from "../../github/state-marker.js";
import { diffPlans, renderRevisionDiff } from "../../plan/diff.js";
import { planHash } from "../../plan/hash.js";
import type { Plan } from "../../plan/schema.js";
import { isWorkflowPath } from "../../tools/paths.js";
import { renderPlanCost, renderRunCost, type CostCap, type Pricing } from "../cost.js";
import type { ThreadState } from "../state.js";

/** Without the `workflows` permission, steps that touch workflows will be refused: say so in the plan up front. */
export function warnAboutWorkflows(plan: Plan): Plan {
  const blocked = plan.steps.filter((step) => step.files.some((file) => isWorkflowPath(file.replace(/^\.\//, ""))));
  if (blocked.length === 0) return plan;
  const risk = `Blueprint cannot change files under .github/workflows/ on this installation (no "workflows" permission): ${blocked.map((step) => step.id).join(", ")} will be refused unless the permission is granted.`;
  return { ...plan, risks: [risk, ...plan.risks] };
}

/** What the planning run came to, as the status comment's last edit: the plan, a question, or why there is none. */
export function resultComment(
  state: ThreadState,
  seal: CommentSeal,
  outcome: AgentOutcome,
  previous: ThreadStateRecord | null,
  cost: { pricing: Pricing; cap: CostCap | undefined },
): string {
  const usage = `<sub>${renderRunCost(outcome.usage, cost.pricing)}</sub>`;
  const now = new Date().toISOString();
  switch (outcome.kind) {
    case "plan_submitted": {
      const done: ThreadState = {
        ...state,
        status: "pending",
        plan: outcome.plan,
        planHash: planHash(outcome.plan),
        steps: Object.fromEntries(outcome.plan.steps.map((step) => [step.id, { status: "pending" as const }])),
        changes: previous?.state.plan
          ? renderRevisionDiff(diffPlans(previous.state.plan, outcome.plan), previous.state.revision)
          : null,
        postedAt: now,
        updatedAt: now,
      };
      return renderPlanComment(done, seal, {
        report: renderPlanCost(outcome.plan, outcome.usage, cost.pricing, cost.cap),
      });
    }
    case "question": {
      const waiting: ThreadState = {
        ...state,
        status: "awaiting_answer",
        question: outcome.question,
        questionMode: "plan",
        updatedAt: now,
      };
      return renderStatusComment(
        waiting,
        seal,
        "## ❓ Blueprint has a question before it can finish the plan",
        `${outcome.question}\n\n**Answer in a comment** (anyone with write access); planning then resumes where it stopped. \`/cancel\` withdraws the question.\n\n${usage}`,
      );
    }
    case "failed":
      return failedComment(state, seal, `${outcome.message}.`, failureAdvice(outcome.failure), usage);
    default:
      return failedComment(
        state,
        seal,
        "the planning run ended without a plan.",
        "Comment `/plan` to try again.",
        usage,
      );
  }
}

function failureAdvice(failure: string): string {
  switch (failure) {
    case "model":
      return "Nothing was changed. Check that the model endpoint is up and its settings are right (`OPENAI_BASE_URL` / `OPENAI_API_KEY` for the App; the Action's `openai-base-url` / `openai-api-key` inputs; the CLI's `--base-url` / `--api-key`), then comment `/plan` again.";
    case "iterations":
    case "wall_time":
    case "tokens":
      return "Nothing was changed. Comment `/plan` with narrower instructions, or raise the limits in `.github/blueprint.yml`.";
    case "cancelled":
      return "Comment `/plan` to start again.";
    default:
      return "Nothing was changed. Comment `/plan` to try again.";
  }
}

export function failedComment(
  state: ThreadState,
  seal: CommentSeal,
  reason: string,
  advice: string,
  extra = "",
): string {
  const failed: ThreadState = { ...state, status: "failed", error: reason, updatedAt: new Date().toISOString() };
  return renderStatusComment(
    failed,
    seal,
    "## ❌ Planning failed",
    [`Blueprint could not make a plan: ${reason}`, `**What to do:** ${advice}`, extra].filter(Boolean).join("\n\n"),
  );
}
