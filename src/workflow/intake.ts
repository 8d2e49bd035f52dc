import { parseComment } from "../github/command.js";
import { atLeast } from "../github/permission.js";
import type { JobQueue } from "../jobs/queue.js";
import type { RecentKeys } from "../jobs/dedupe.js";
import { PermissionCache } from "../jobs/permission-cache.js";
import type { PermissionLevel } from "../github/permission.js";
import type { JobContext, WorkflowDeps } from "./deps.js";
import type { ReviewComment, ThreadPort } from "./ports.js";
import { respondToComment } from "./respond.js";
import { cancelWaiting } from "./cancel.js";
import { markStaleOnPush } from "./stale.js";
import { safePort } from "./safe-port.js";
import { plainError } from "./plan.js";
import { HELP_TEXT, refusalReply, statusReply, typoReply } from "./help.js";
import { planThread } from "./plan.js";
import { buildThread } from "./build.js";

export interface CommentIntent {
  deliveryId: string;
  commentId: number;
  /** GitHub's time of the comment, from the webhook (absent where no webhook carried it). */
  createdAt?: string | undefined;
  actor: string;
  actorIsBot: boolean;
  body: string;
}

/**
 * From a comment to a queued job: parse, authorise, acknowledge, enqueue. Runs off the webhook
 * response path; the slow work runs in the queue, one job at a time per thread.
 */
export interface ReviewIntent {
  deliveryId: string;
  reviewId: number;
  actor: string;
  actorIsBot: boolean;
  state: string;
  body: string;
  commitId: string;
  /** `review.submitted_at`: the review approves the revision standing then. */
  submittedAt: string;
}

export class Intake {
  constructor(
    private readonly deps: WorkflowDeps,
    private readonly queue: JobQueue,
    private readonly recent: RecentKeys,
    private readonly permissions = new PermissionCache(),
  ) {}

  /**
   * The port every use case gets: bodies redacted and fitted (safePort), and permissions read
   * through the shared cache, so the checks in intake and in the jobs cost one GitHub call per
   * person and repository while the answer is fresh.
   */
  private portFor(rawPort: ThreadPort): ThreadPort {
    const port = safePort(rawPort, this.deps.redact, this.deps.stateKey);
    const repository = `${port.repo.owner}/${port.repo.name}`;
    return { ...port, permission: (login) => this.permissions.get(repository, login, () => port.permission(login)) };
  }

  /**
   * Reads the actor's permission for an event claimed under `keys`. If GitHub cannot tell (after
   * retries), the claim is released so that a redelivery of the event is handled, not dropped.
   */
  private async authorise(port: ThreadPort, actor: string, keys: readonly string[]): Promise<PermissionLevel> {
    try {
      return await port.permission(actor);
    } catch (error) {
      this.recent.release(keys);
      throw error;
    }
  }

  async onComment(rawPort: ThreadPort, intent: CommentIntent): Promise<void> {
    const port = this.portFor(rawPort);
    // 1. Bots (Blueprint included) never command.
    if (intent.actorIsBot) return;
    // 2. One job per delivery and per comment, however often GitHub redelivers.
    const keys = [`delivery:${intent.deliveryId}`, `comment:${intent.commentId}`];
    if (!this.recent.claim(keys)) return;
    // 3. Is it addressed to us at all? A plain comment may still answer a question or give feedback.
    const parsed = parseComment(intent.body);
    if (parsed.kind === "none") {
      if (intent.body.trim() === "") return;
      this.enqueue(port, `reading a comment by @${intent.actor}`, intent.deliveryId, intent.actor, (job) =>
        respondToComment(this.deps, job, { commentId: intent.commentId, body: intent.body }),
      false,
      );
      return;
    }
    // 4. Authorise with the collaborator-permission endpoint, not author_association.
    //    `/help` and `/status` only read what the thread already shows: anyone may ask (SPEC §3).
    const minimum = this.deps.minPermission;
    const readOnly = parsed.kind === "command" && (parsed.command.name === "help" || parsed.command.name === "status");
    if (!readOnly && !atLeast(await this.authorise(port, intent.actor, keys), minimum)) {
      if (parsed.kind === "typo") return;
      await port.postComment(refusalReply(intent.actor, minimum));
      return;
    }
    // 5. Acknowledge within seconds.
    await port.reactToComment(intent.commentId, "eyes").catch((error) => this.deps.log.warn({ err: error }, "could not react"));
    if (parsed.kind === "typo") {
      await port.postComment(typoReply(parsed.word, parsed.suggestion));
      return;
    }
    if (parsed.kind === "invalid") {
      await port.postComment(parsed.message);
      return;
    }
    // 6. Quick answers run here; the rest goes to the thread's queue.
    const key = threadKey(port);
    const command = parsed.command;
    switch (command.name) {
      case "help":
        await port.postComment(HELP_TEXT);
        return;
      case "status":
        await port.postComment(await statusReply(port, this.queue.runningLabel(key), this.deps.stateKey));
        return;
      case "cancel": {
        const stopped = this.queue.cancel(key);
        const dropped = stopped.dropped > 0 ? ` The ${stopped.dropped === 1 ? "command" : `${stopped.dropped} commands`} queued behind it will not run; comment again if you still want ${stopped.dropped === 1 ? "it" : "them"}.` : "";
        if (stopped.running) {
          await port.postComment(`Stopping ${stopped.running} at the next safe point. Everything already pushed stays.${dropped}`);
          return;
        }
        this.enqueue(port, "withdrawing a question", intent.deliveryId, intent.actor, (job) => cancelWaiting(this.deps, job));
        return;
      }
      case "plan":
        this.enqueue(port, `planning for @${intent.actor}`, intent.deliveryId, intent.actor, (job) =>
          planThread(this.deps, job, { trigger: { kind: "plan", instructions: command.instructions }, commandCommentId: intent.commentId }),
        );
        return;
      case "revise":
        this.enqueue(port, `revising for @${intent.actor}`, intent.deliveryId, intent.actor, (job) =>
          planThread(this.deps, job, {
            trigger: { kind: "feedback", feedback: { author: intent.actor, source: "revise", text: command.feedback } },
            commandCommentId: intent.commentId,
          }),
        );
        return;
      case "build": {
        const approval = { approver: intent.actor, revision: command.revision, steps: command.steps, force: command.force, permitted: true, minimumPermission: minimum, commandCommentId: intent.commentId, commandCreatedAt: intent.createdAt };
        const note = { author: intent.actor, source: "build" as const, text: command.notes };
        this.enqueue(port, `building for @${intent.actor}`, intent.deliveryId, intent.actor, (job) => buildThread(this.deps, job, { approval, fresh: command.fresh, note }));
        return;
      }
    }
  }

  /** An approving pull-request review is a `/build` (only when a plan is pending; otherwise it is not for us). */
  async onReview(rawPort: ThreadPort, intent: ReviewIntent): Promise<void> {
    const port = this.portFor(rawPort);
    if (intent.actorIsBot) return;
    const keys = [`delivery:${intent.deliveryId}`, `review:${intent.reviewId}`];
    if (!this.recent.claim(keys)) return;
    const state = intent.state.toLowerCase();
    if (state !== "approved" && state !== "changes_requested") return;
    const minimum = this.deps.minPermission;
    const permitted = atLeast(await this.authorise(port, intent.actor, keys), minimum);
    if (state === "changes_requested") {
      // Feedback from people who cannot command Blueprint is ordinary review, not addressed to us.
      if (!permitted) return;
      this.enqueue(port, `revising for @${intent.actor}`, intent.deliveryId, intent.actor, async (job) =>
        planThread(this.deps, job, {
          trigger: { kind: "feedback", feedback: { author: intent.actor, source: "review", text: reviewFeedback(intent.body, await port.reviewComments(intent.reviewId)) } },
        }),
      );
      return;
    }
    const approval = { approver: intent.actor, revision: null, steps: [], force: false, reviewCommit: intent.commitId, submittedAt: intent.submittedAt, permitted, minimumPermission: minimum };
    const note = { author: intent.actor, source: "review" as const, text: intent.body };
    this.enqueue(port, `building for @${intent.actor}`, intent.deliveryId, intent.actor, (job) => buildThread(this.deps, job, { approval, fresh: false, note }));
  }

  /** `pull_request.synchronize`: new commits may make a pending plan stale. */
  onSynchronize(rawPort: ThreadPort, intent: { deliveryId: string; headSha: string; actor: string }): void {
    const port = this.portFor(rawPort);
    if (!this.recent.firstTime(`delivery:${intent.deliveryId}`)) return;
    this.enqueue(port, "checking the plan against new commits", intent.deliveryId, intent.actor, (job) => markStaleOnPush(this.deps, job, intent.headSha), false);
  }

  private enqueue(port: ThreadPort, label: string, deliveryId: string, actor: string, run: (job: JobContext) => Promise<void>, announce = true): void {
    const key = threadKey(port);
    const guarded = async (signal: AbortSignal) => {
      try {
        await run({ port, actor, signal, deliveryId });
      } catch (error) {
        // Use cases report what they can; anything that still escapes gets a short message, never silence.
        this.deps.log.error({ err: error, deliveryId, job: label }, "job failed");
        await port
          .postComment(`❌ Blueprint stopped while ${label}: ${plainError(error)} Nothing already pushed was lost; comment the command again to retry. (delivery \`${deliveryId}\`)`)
          .catch((postError) => this.deps.log.error({ err: postError, deliveryId }, "could not report a failed job"));
      }
    };
    const ahead = this.queue.enqueue({ key, label, run: guarded });
    if (ahead > 0 && announce) {
      void port
        .postComment(`Queued: Blueprint is busy on this thread (${this.queue.runningLabel(key) ?? "a job"}); this starts when it is done.`)
        .catch((error) => this.deps.log.warn({ err: error }, "could not post the queued notice"));
    }
  }
}

/** A "request changes" review as feedback: its body, then each inline comment with file and line. */
export function reviewFeedback(body: string, inline: ReviewComment[]): string {
  const parts = [body.trim() || "(no summary)"];
  for (const comment of inline) parts.push(`- \`${comment.path}${comment.line ? `:${comment.line}` : ""}\`: ${comment.body.trim()}`);
  return parts.join("\n");
}

export function threadKey(port: ThreadPort): string {
  return `${port.repo.owner}/${port.repo.name}#${port.number}`;
}
