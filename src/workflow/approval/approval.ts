import { findThreadState, type ThreadStateRecord } from "../../github/plan-comment.js";
import type { ThreadSeal } from "../../github/state-marker.js";
import type { ThreadComment, ThreadInfo } from "../ports.js";
import { planMadeOn, type ThreadState } from "../state.js";

export interface Approval {
  approver: string;
  /** `/build v2`: the revision the approver means, when named. */
  revision: number | null;
  steps: string[];
  force: boolean;
  /** For an approving review: the commit it approved. */
  reviewCommit?: string | undefined;
  /** For an approving review: when it was submitted (it covers the revision standing then). */
  submittedAt?: string | undefined;
  /** For `/build`: the command's comment (it covers the revision posted before it). */
  commandCommentId?: number | undefined;
  /** The `/build` comment's time from the webhook, for when the comment is gone by the time the job runs. */
  commandCreatedAt?: string | undefined;
  /**
   * For a click on a plan check's Build button: the commit that check was on, when the click came, and the hash of the
   * plan its summary shows (absent on checks made before it was recorded).
   */
  checkClick?: { headSha: string; clickedAt: string; planHash?: string | undefined } | undefined;
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
export function checkApproval(
  comments: ThreadComment[],
  info: ThreadInfo,
  approval: Approval,
  seal: ThreadSeal,
): ApprovalCheck {
  const lookup = findThreadState(comments, seal);
  const fromReview = approval.reviewCommit !== undefined;
  if (lookup.kind === "corrupt") {
    return {
      ok: false,
      reason: `The plan comment's hidden state is damaged (${lookup.reason}), so Blueprint will not build from it. Only Blueprint may write its hidden state. Comment \`/plan\` to make a fresh plan.`,
    };
  }
  if (lookup.kind === "none" || !lookup.plan?.state.plan) {
    return { ok: false, silent: fromReview, reason: "There is no plan to build here yet. Comment `/plan` first." };
  }
  const latest = lookup.plan;
  const { state } = latest;
  const reason =
    newerRevisionProblem(lookup.latest, latest) ??
    targetProblem(approval, state) ??
    (approval.permitted
      ? null
      : `@${approval.approver}'s approval does not count: only people with ${approval.minimumPermission} access (or higher) can approve Blueprint's plans.`) ??
    postedAfterApproval(comments, latest, approval) ??
    statusProblem(approval, state) ??
    headProblem(info, approval, state);
  return reason ? { ok: false, reason } : { ok: true, record: latest };
}

/** A newer revision being made, or waiting for an answer: the plan shown above it is not final. */
function newerRevisionProblem(newest: ThreadStateRecord, plan: ThreadStateRecord): string | null {
  if (newest.comment.id === plan.comment.id) return null;
  const newer = newest.state;
  if (newer.status === "planning") return `Blueprint is making plan v${newer.revision}; wait for it.`;
  if (newer.status === "awaiting_answer")
    return `Blueprint is waiting for an answer before it can finish plan v${newer.revision}; answer it first (or \`/cancel\`).`;
  return null;
}

/** Whether the approval names this plan: its revision, and for a check's button the commit and the plan it showed. */
function targetProblem(approval: Approval, state: ThreadState): string | null {
  if (approval.revision !== null && approval.revision !== state.revision) {
    const what = approval.checkClick
      ? `@${approval.approver} clicked **Build plan v${approval.revision}** on an outdated check: plan v${approval.revision}`
      : `Plan v${approval.revision}`;
    return `${what} was superseded by v${state.revision}; only the latest revision can be built. Comment \`/build\` (or use v${state.revision}'s check) to build v${state.revision}.`;
  }
  const madeOn = planMadeOn(state);
  if (approval.checkClick && madeOn && approval.checkClick.headSha !== madeOn)
    return `The check @${approval.approver} clicked is on commit \`${approval.checkClick.headSha.slice(0, 7)}\`, but plan v${state.revision} was made on \`${madeOn.slice(0, 7)}\`, so the click does not approve it. Comment \`/build\` to build v${state.revision}.`;
  const shown = approval.checkClick?.planHash;
  if (shown !== undefined && shown !== state.planHash)
    return `The plan check @${approval.approver} clicked shows plan v${state.revision} as Blueprint first posted it (\`${shown}\`), but the plan has been edited since (it is now \`${state.planHash ?? "none"}\`), so the click does not approve it. Read the plan as it now reads, then comment \`/build\` to build it.`;
  return null;
}

/** Whether the plan's status lets it be built (or resumed), and the steps named are its own. */
function statusProblem(approval: Approval, state: ThreadState): string | null {
  switch (state.status) {
    case "planning":
      return "Blueprint is still planning; wait for the plan.";
    case "awaiting_answer":
      if (!approval.resuming)
        return "Blueprint is waiting for an answer to its question; answer it first (or `/cancel`).";
      break;
    case "superseded":
      return "This plan was superseded; comment `/plan` for a fresh one.";
    case "built":
      if (approval.steps.length === 0) return "This plan is already built. Comment `/plan` for new work.";
  }
  const unknown = approval.steps.filter((id) => !state.plan?.steps.some((step) => step.id === id));
  return unknown.length > 0 ? `The plan has no step ${unknown.join(", ")}.` : null;
}

/** A pull request's plan was made on its head: a review of another commit, a moved head or a stale plan need --force. */
function headProblem(info: ThreadInfo, approval: Approval, state: ThreadState): string | null {
  if (approval.resuming) return movedWhileWaiting(info, state);
  if (state.head && info.pullRequest) {
    if (approval.reviewCommit !== undefined && approval.reviewCommit !== state.head.sha)
      return `The review approved commit \`${approval.reviewCommit.slice(0, 7)}\`, but the plan was made on \`${state.head.sha.slice(0, 7)}\`. Comment \`/plan\` to re-plan on the current head, or \`/build --force\`.`;
    if (info.pullRequest.headSha !== state.head.sha && !approval.force)
      return `The pull request's head moved (\`${state.head.sha.slice(0, 7)}\` → \`${info.pullRequest.headSha.slice(0, 7)}\`) since the plan was made, so the plan may be stale. Comment \`/plan\` to re-plan, or \`/build --force\` to build it anyway.`;
  }
  if (state.stale && !approval.force)
    return `The plan is stale: ${state.stale} Comment \`/plan\` to re-plan, or \`/build --force\` to build it anyway.`;
  return null;
}

/**
 * A build resumed by an answer runs on the approval it was given (what that approval accepted, `--force` included), not
 * on a pull request whose head moved since: other than by Blueprint's own pushes, each of which it records as the head.
 */
function movedWhileWaiting(info: ThreadInfo, state: ThreadState): string | null {
  const now = info.pullRequest?.headSha;
  if (!state.head || !now || now === state.head.sha || now === state.approvedOn?.head) return null;
  return `The pull request's head moved (\`${state.head.sha.slice(0, 7)}\` → \`${now.slice(0, 7)}\`) while the build waited for an answer, so the plan may be stale: the answer does not resume the build. ${STALE_WHILE_WAITING}`;
}

/** What to do about a build whose plan went stale while it waited for an answer. */
export const STALE_WHILE_WAITING =
  "Comment `/cancel` to withdraw the question, then `/plan` to re-plan, or `/build --force` to build the plan anyway.";

/**
 * An approval covers what the approver could have seen (docs/security.md): `/build` the revision posted
 * before its comment (GitHub's comment order, and the time the plan was posted), a review the
 * revision standing when it was submitted. Why not, or null when the latest revision was seen.
 */
function postedAfterApproval(comments: ThreadComment[], plan: ThreadStateRecord, approval: Approval): string | null {
  const { revision } = plan.state;
  const readAgain = `Read v${revision}, then`;
  if (approval.commandCommentId !== undefined) {
    const commandTime = commandCreatedAt(comments, approval);
    const order = plan.comment.id > approval.commandCommentId ? "after" : postedOrder(plan, commandTime);
    const by = `@${approval.approver}'s \`/build\``;
    if (order === "after")
      return `Plan v${revision} was posted after ${by}, so that command does not approve it. ${readAgain} comment \`/build\` again (or \`/build v${revision}\`) to build it.`;
    if (order === "same second")
      return `Plan v${revision} was posted in the same second as ${by}, and GitHub times comments to the second, so Blueprint cannot tell that the command came after it. ${readAgain} comment \`/build\` again (or \`/build v${revision}\`) to build it.`;
  }
  if (approval.submittedAt !== undefined) {
    const order = postedOrder(plan, Date.parse(approval.submittedAt));
    const by = `@${approval.approver}'s review was submitted`;
    if (order === "after")
      return `Plan v${revision} was posted after ${by}, so the review does not approve it. ${readAgain} approve the pull request again (or comment \`/build\`) to build it.`;
    if (order === "same second")
      return `Plan v${revision} was posted in the same second as ${by}, and GitHub times reviews to the second, so Blueprint cannot tell that the review came after it. ${readAgain} approve the pull request again (or comment \`/build\`) to build it.`;
  }
  return null;
}

/**
 * Whether the plan was posted after an approval GitHub timed at `approvedAt`, compared at GitHub's resolution.
 *
 * The plan's `postedAt` is this process's clock in milliseconds; GitHub gives a comment's or review's time in whole
 * seconds (the second it fell in). A plan posted in an earlier second than the approval came before it; one posted in
 * a later second came after. Within the same second the order is unknown: the approval's second began before the plan
 * and ended after it. Comment ids do not settle it, because the plan is an edit of the status comment ("Planning…")
 * posted minutes before, so a `/build` made while it read "Planning…" has the higher id and may have predated the plan
 * text by less than a second. The one safe tie-break is the plan comment's `updated_at` (GitHub's clock, at or after
 * the edit that wrote the plan, later edits only moving it on): in an earlier second than the approval, the plan came
 * first. Otherwise a same-second approval is refused, and the thread told why.
 */
function postedOrder(plan: ThreadStateRecord, approvedAt: number | null): "before" | "after" | "same second" {
  const posted = plan.state.postedAt ? Date.parse(plan.state.postedAt) : Number.NaN;
  if (approvedAt === null || Number.isNaN(approvedAt) || Number.isNaN(posted) || posted <= approvedAt) return "before";
  const second = (ms: number) => Math.floor(ms / 1000);
  if (second(posted) > second(approvedAt)) return "after";
  return second(Date.parse(plan.comment.updatedAt)) < second(approvedAt) ? "before" : "same second";
}

/**
 * A hand edit of the plan comment (docs/workflow.md) made after the approval was not seen by the approver
 * (docs/security.md): why the approval does not cover it, or null. Call it only when the plan as it reads
 * differs from Blueprint's state: Blueprint's own saves re-render that state, so however late they
 * were made, they never count as an edit.
 */
export function editedAfterApproval(
  comments: ThreadComment[],
  planComment: ThreadComment,
  approval: Approval,
): string | null {
  const edited = Date.parse(planComment.updatedAt);
  const again = "Read the plan as it now reads, then comment `/build` again to build it.";
  if (approval.resuming) {
    // The build saved the plan as it read when it stopped to ask, so any difference came later.
    return `The plan was edited while the build waited for an answer, after @${approval.approver}'s approval, so that approval does not cover the edit. Read the plan as it now reads, then comment \`/cancel\` and \`/build\` to build it.`;
  }
  if (approval.commandCommentId !== undefined) {
    const commandTime = commandCreatedAt(comments, approval);
    // A /build deleted before the job ran, with no time from its webhook: the edit may have come after it.
    if (commandTime === null)
      return `@${approval.approver}'s \`/build\` comment is gone, so Blueprint cannot tell whether the hand edit of the plan came after it. ${again}`;
    if (edited > commandTime)
      return `The plan was edited after @${approval.approver}'s \`/build\`, so that command does not approve the edit. ${again}`;
  }
  if (approval.submittedAt !== undefined && edited > Date.parse(approval.submittedAt)) {
    return `The plan was edited after @${approval.approver}'s review was submitted, so the review does not approve the edit. ${again}`;
  }
  if (approval.checkClick) {
    // The check's summary in the Checks tab shows the plan as Blueprint posted it, never a hand edit, whenever it came.
    const when =
      edited > Date.parse(approval.checkClick.clickedAt)
        ? "after @" + approval.approver + " clicked the plan check's Build button"
        : "by hand, and the plan check's summary in the Checks tab still shows the plan as Blueprint posted it";
    return `The plan was edited ${when}, so that click does not approve the edit. ${again}`;
  }
  return null;
}

/** When the approving `/build` was made: GitHub's listing when the comment is still there, else the webhook's time. */
export function commandCreatedAt(comments: ThreadComment[], approval: Approval): number | null {
  const listed =
    comments.find((comment) => comment.id === approval.commandCommentId)?.createdAt ?? approval.commandCreatedAt;
  const time = listed === undefined ? Number.NaN : Date.parse(listed);
  return Number.isNaN(time) ? null : time;
}
