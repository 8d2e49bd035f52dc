import { renderStatusComment, type ThreadStateRecord } from "../../github/plan-comment.js";
import { commentSeal, MARKER_PREFIX, type CommentSeal, type ThreadSeal } from "../../github/state-marker.js";
import type { JobContext, WorkflowDeps } from "../deps.js";
import type { ThreadComment } from "../ports.js";
import type { ThreadState } from "../state.js";
import { TrackingComment } from "../surfaces/index.js";

/** The status comment a planning run keeps up to date until it turns into the plan. */
export interface PlanStatus {
  id: number;
  sealed: CommentSeal;
  tracking: TrackingComment;
  /** The "Planning…" comment with the files read so far (and a retried model request's line). */
  progress(filesRead: number, retry?: string | null): string;
}

/**
 * One status comment, kept up to date (an answered question's comment is reused, and so is the
 * comment of this job's run that died). A new one gets its state in an edit: the state is signed
 * for the comment's id, which GitHub assigns.
 */
export async function openPlanStatus(
  deps: WorkflowDeps,
  job: JobContext,
  input: { comments: ThreadComment[]; seal: ThreadSeal; state: ThreadState; reuse: ThreadStateRecord | null },
): Promise<PlanStatus> {
  const { port } = job;
  const { state } = input;
  const heading =
    state.revision > 1 ? `## ⏳ Revising the plan (v${state.revision - 1} → v${state.revision})…` : "## ⏳ Planning…";
  // A first run of this delivery that died between posting its comment and signing it left it stateless: found by its
  // delivery.
  const reused = input.reuse ?? unsignedStatusComment(input.comments, job.deliveryId);
  const posted = reused
    ? { id: reused.comment.id, url: reused.comment.url }
    : await port.postComment(`${heading}\n\n${planningBody(job.actor, 0)}\n\n${postedFor(job.deliveryId)}`);
  const sealed = commentSeal(input.seal, posted.id);
  await port.updateComment(posted.id, renderStatusComment(state, sealed, heading, planningBody(job.actor, 0)));
  const tracking = new TrackingComment(port, posted.id, posted.url, deps.progressIntervalMs, (error) =>
    deps.log.warn({ err: error, deliveryId: job.deliveryId }, "could not update the tracking comment"),
  );
  return {
    id: posted.id,
    sealed,
    tracking,
    progress: (filesRead, retry = null) =>
      renderStatusComment(state, sealed, heading, planningBody(job.actor, filesRead, retry)),
  };
}

/**
 * Written into a status comment as it is first posted, before its state is signed in by an edit (the
 * state is signed for the comment's id, which GitHub assigns): the delivery whose run posted it.
 */
function postedFor(deliveryId: string): string {
  return `<!-- blueprint:posted ${encodeURIComponent(deliveryId)} -->`;
}

/**
 * This installation's status comment that a run of `deliveryId` posted and never signed (its process
 * died in between): a comment of ours still as first posted, heading and all, with no state in it.
 */
function unsignedStatusComment(comments: ThreadComment[], deliveryId: string): { comment: ThreadComment } | null {
  const comment = comments.find(
    (c) =>
      c.own &&
      /^## ⏳ (?:Planning|Revising the plan)/.test(c.body) &&
      c.body.includes(postedFor(deliveryId)) &&
      !c.body.includes(MARKER_PREFIX),
  );
  return comment ? { comment } : null;
}

function planningBody(actor: string, filesRead: number, retry: string | null = null): string {
  const progress = `Planning for @${actor} — read ${filesRead} file${filesRead === 1 ? "" : "s"} so far. This comment turns into the plan when it is ready.`;
  return retry ? `${progress}\n\n${retry}` : progress;
}
