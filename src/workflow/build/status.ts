import { renderPlanComment } from "../../github/plan-comment.js";
import type { CommentSeal } from "../../github/state-marker.js";
import type { JobContext, WorkflowDeps } from "../deps.js";
import type { ThreadComment } from "../ports.js";
import type { ThreadState } from "../state.js";
import { redactRendered } from "../safe-port.js";
import { TrackingComment } from "../surfaces/index.js";

/** The plan comment as it reads now, with a status line above the plan and a report below it. */
export type PlanCommentRenderer = (statusLine?: string, report?: string) => string;

export function planCommentRenderer(
  deps: Pick<WorkflowDeps, "redact">,
  state: ThreadState,
  seal: CommentSeal,
): PlanCommentRenderer {
  return (statusLine, report) =>
    redactRendered(
      deps.redact,
      renderPlanComment({ ...state, updatedAt: new Date().toISOString() }, seal, {
        ...(statusLine ? { statusLine } : {}),
        ...(report ? { report } : {}),
      }),
    );
}

/** The plan comment is the build's status comment. */
export interface BuildStatus {
  /** Saves the state with a status line (and a report): sent at once, in order. */
  save(statusLine?: string, report?: string): Promise<void>;
  /** A model retry shows under the current status line (a throttled edit) until the model answers again. */
  showRetry(retryLine: string | null): void;
}

/** `afterSave` hears each save once it is on GitHub (the thread's label follows the saved state). */
export function buildStatus(
  deps: WorkflowDeps,
  job: JobContext,
  planComment: ThreadComment,
  render: PlanCommentRenderer,
  afterSave: () => Promise<void> = async () => {},
): BuildStatus {
  const tracking = new TrackingComment(job.port, planComment.id, planComment.url, deps.progressIntervalMs, (error) =>
    deps.log.warn({ err: error, deliveryId: job.deliveryId }, "could not update the plan comment"),
  );
  let statusNow: string | undefined;
  return {
    async save(statusLine, report) {
      statusNow = statusLine;
      await tracking.write(render(statusLine, report));
      await afterSave();
    },
    showRetry: (retryLine) =>
      tracking.progress(render(retryLine && statusNow ? `${statusNow}\n>\n> ${retryLine}` : statusNow)),
  };
}
