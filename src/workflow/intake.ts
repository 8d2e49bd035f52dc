import { parseComment } from "../github/command.js";
import { atLeast } from "../github/permission.js";
import type { JobQueue } from "../jobs/queue.js";
import type { RecentKeys } from "../jobs/dedupe.js";
import type { WorkflowDeps } from "./deps.js";
import type { ThreadPort } from "./ports.js";
import { HELP_TEXT, refusalReply, statusReply, typoReply } from "./help.js";
import { planThread } from "./plan.js";

export interface CommentIntent {
  deliveryId: string;
  commentId: number;
  actor: string;
  actorIsBot: boolean;
  body: string;
}

/**
 * From a comment to a queued job: parse, authorise, acknowledge, enqueue. Runs off the webhook
 * response path; the slow work runs in the queue, one job at a time per thread.
 */
export class Intake {
  constructor(
    private readonly deps: WorkflowDeps,
    private readonly queue: JobQueue,
    private readonly recent: RecentKeys,
  ) {}

  async onComment(port: ThreadPort, intent: CommentIntent): Promise<void> {
    // 1. Bots (Blueprint included) never command.
    if (intent.actorIsBot) return;
    // 2. One job per delivery and per comment, however often GitHub redelivers.
    if (!this.recent.firstTime(`delivery:${intent.deliveryId}`) || !this.recent.firstTime(`comment:${intent.commentId}`)) return;
    // 3. Is it addressed to us at all?
    const parsed = parseComment(intent.body);
    if (parsed.kind === "none") return;
    // 4. Authorise with the collaborator-permission endpoint, not author_association.
    const minimum = this.deps.minPermission;
    const level = await port.permission(intent.actor);
    if (!atLeast(level, minimum)) {
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
        await port.postComment(await statusReply(port, this.queue, key));
        return;
      case "cancel": {
        const stopped = this.queue.cancel(key);
        await port.postComment(
          stopped.running
            ? `Stopping ${stopped.running} at the next safe point. Everything already pushed stays.`
            : "Nothing is running on this thread.",
        );
        return;
      }
      case "plan": {
        const ahead = this.queue.enqueue({
          key,
          label: `planning for @${intent.actor}`,
          run: (signal) =>
            planThread(this.deps, { port, actor: intent.actor, signal, deliveryId: intent.deliveryId }, {
              instructions: command.instructions,
              commandCommentId: intent.commentId,
            }),
        });
        if (ahead > 0) await port.postComment(`Queued: Blueprint is busy on this thread (${this.queue.runningLabel(key) ?? "a job"}); your \`/plan\` starts when it is done.`);
        return;
      }
      default:
        await port.postComment(`\`/${command.name}\` is not available yet on this installation. Comment \`/help\` for what works.`);
    }
  }
}

export function threadKey(port: ThreadPort): string {
  return `${port.repo.owner}/${port.repo.name}#${port.number}`;
}
