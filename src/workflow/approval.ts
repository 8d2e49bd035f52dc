import { findThreadState, type ThreadStateRecord } from "../github/plan-comment.js";
import type { ThreadComment, ThreadInfo } from "./ports.js";

export interface Approval {
  approver: string;
  /** `/build v2`: the revision the approver means, when named. */
  revision: number | null;
  steps: string[];
  force: boolean;
  /** For an approving review: the commit it approved. */
  reviewCommit?: string | undefined;
  /** Whether the approver has the permission to command Blueprint. */
  permitted: boolean;
  minimumPermission: string;
  /** Resuming a build that stopped to ask a question (the answer is the go-ahead). */
  resuming?: boolean;
}

export type ApprovalCheck =
  | { ok: true; record: ThreadStateRecord }
  /** `silent`: an approving review with no plan is not addressed to Blueprint. */
  | { ok: false; reason: string; silent?: boolean };

/** Is this approval valid for the latest plan? Every "no" says why, in words for the thread. */
export function checkApproval(comments: ThreadComment[], info: ThreadInfo, approval: Approval): ApprovalCheck {
  const lookup = findThreadState(comments);
  const fromReview = approval.reviewCommit !== undefined;
  if (lookup.kind === "corrupt") {
    return { ok: false, reason: `The plan comment's hidden state is damaged (${lookup.reason}), so Blueprint will not build from it. Comment \`/plan\` to make a fresh plan.` };
  }
  if (lookup.kind === "none" || !lookup.plan?.state.plan) {
    return { ok: false, silent: fromReview, reason: "There is no plan to build here yet. Comment `/plan` first." };
  }
  const latest = lookup.plan;
  const { state } = latest;
  if (lookup.latest.comment.id !== latest.comment.id) {
    // A newer revision is being made, or waits for an answer: the plan shown above it is not final.
    const newer = lookup.latest.state;
    if (newer.status === "planning") return { ok: false, reason: `Blueprint is making plan v${newer.revision}; wait for it.` };
    if (newer.status === "awaiting_answer") return { ok: false, reason: `Blueprint is waiting for an answer before it can finish plan v${newer.revision}; answer it first (or \`/cancel\`).` };
  }
  if (approval.revision !== null && approval.revision !== state.revision) {
    return { ok: false, reason: `Plan v${approval.revision} was superseded by v${state.revision}; only the latest revision can be built. Comment \`/build\` to build v${state.revision}.` };
  }
  if (!approval.permitted) {
    return { ok: false, reason: `@${approval.approver}'s approval does not count: only people with ${approval.minimumPermission} access (or higher) can approve Blueprint's plans.` };
  }
  switch (state.status) {
    case "planning":
      return { ok: false, reason: "Blueprint is still planning; wait for the plan." };
    case "awaiting_answer":
      if (!approval.resuming) return { ok: false, reason: "Blueprint is waiting for an answer to its question; answer it first (or `/cancel`)." };
      break;
    case "superseded":
      return { ok: false, reason: "This plan was superseded; comment `/plan` for a fresh one." };
    case "built":
      if (approval.steps.length === 0) return { ok: false, reason: "This plan is already built. Comment `/plan` for new work." };
  }
  const unknown = approval.steps.filter((id) => !state.plan?.steps.some((step) => step.id === id));
  if (unknown.length > 0) return { ok: false, reason: `The plan has no step ${unknown.join(", ")}.` };

  if (state.head && info.pullRequest) {
    if (fromReview && approval.reviewCommit !== state.head.sha) {
      return { ok: false, reason: `The review approved commit \`${approval.reviewCommit?.slice(0, 7)}\`, but the plan was made on \`${state.head.sha.slice(0, 7)}\`. Comment \`/plan\` to re-plan on the current head, or \`/build --force\`.` };
    }
    if (info.pullRequest.headSha !== state.head.sha && !approval.force) {
      return { ok: false, reason: `The pull request's head moved (\`${state.head.sha.slice(0, 7)}\` → \`${info.pullRequest.headSha.slice(0, 7)}\`) since the plan was made, so the plan may be stale. Comment \`/plan\` to re-plan, or \`/build --force\` to build it anyway.` };
    }
  }
  if (state.stale && !approval.force) {
    return { ok: false, reason: `The plan is stale: ${state.stale} Comment \`/plan\` to re-plan, or \`/build --force\` to build it anyway.` };
  }
  return { ok: true, record: latest };
}
