import { commandCreatedAt, type Approval } from "./approval.js";
import type { ThreadComment } from "../ports.js";
import type { ThreadState } from "../state.js";

/**
 * Records a valid approval of the revision in its state, so that approvals by several people add
 * up (docs/security.md): a `/build` with the time of its command (a check's Build button: of the click), a review with
 * the time it was submitted.
 * The same person approving the same way again keeps one entry, with the later time.
 */
export function recordApproval(state: ThreadState, comments: ThreadComment[], approval: Approval): void {
  const via = approval.reviewCommit !== undefined ? "review" : "build";
  const time =
    via === "review"
      ? Date.parse(approval.submittedAt ?? "")
      : approval.checkClick
        ? Date.parse(approval.checkClick.clickedAt)
        : commandCreatedAt(comments, approval);
  const at = time === null || Number.isNaN(time) ? null : new Date(time).toISOString();
  const others = state.approvals.filter(
    (entry) => !(entry.via === via && entry.login.toLowerCase() === approval.approver.toLowerCase()),
  );
  state.approvals = [...others, { login: approval.approver, via, at }];
}

/** A hand edit of the plan was not seen by approvals given before it: they no longer count. */
export function dropApprovalsBefore(state: ThreadState, editedAt: string): void {
  const edited = Date.parse(editedAt);
  state.approvals = state.approvals.filter((entry) => entry.at !== null && Date.parse(entry.at) >= edited);
}
