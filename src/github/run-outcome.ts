import { findThreadState, type ThreadStateRecord } from "./plan-comment.js";
import { hasStateMarker, threadSeal, type StateKey } from "./state-marker.js";
import type { Logger } from "../workflow/deps.js";
import type { ThreadPort } from "../workflow/ports.js";

/** What one run wrote to its thread, for the front ends that report on a single run (Action, CLI). */
export interface ThreadWrites {
  /** Comments posted or edited during the run. */
  touched: Set<number>;
  /** Comments posted during the run that carry no state: replies such as refusals, help, notices. */
  replies: string[];
}

/** Wraps a port so every comment written through it is recorded. */
export function recordWrites(port: ThreadPort): { port: ThreadPort; writes: ThreadWrites } {
  // A comment is posted before its state is written into it (the state is signed for its id): it is a
  // reply only if no state follows.
  const replies = new Map<number, string>();
  const writes: ThreadWrites = {
    touched: new Set(),
    get replies() {
      return [...replies.values()];
    },
  };
  const recorded: ThreadPort = {
    repo: port.repo,
    number: port.number,
    info: () => port.info(),
    comments: () => port.comments(),
    async postComment(body) {
      const posted = await port.postComment(body);
      writes.touched.add(posted.id);
      if (!hasStateMarker(body)) replies.set(posted.id, body);
      return posted;
    },
    async updateComment(id, body) {
      await port.updateComment(id, body);
      writes.touched.add(id);
      if (hasStateMarker(body)) replies.delete(id);
    },
    reactToComment: (id, reaction) => port.reactToComment(id, reaction),
    permission: (login) => port.permission(login),
    teamMember: (org, teamSlug, login) => port.teamMember(org, teamSlug, login),
    account: (login) => port.account(login),
    gitToken: () => port.gitToken(),
    commitUrl: (sha) => port.commitUrl(sha),
    upsertPullRequest: (draft) => port.upsertPullRequest(draft),
    canWriteWorkflows: () => port.canWriteWorkflows(),
    reviewComments: (id) => port.reviewComments(id),
    comment: (id) => port.comment(id),
    review: (id) => port.review(id),
    minimizeComment: (comment) => port.minimizeComment(comment),
    threadLabels: () => port.threadLabels(),
    repositoryLabels: () => port.repositoryLabels(),
    createLabel: (label) => port.createLabel(label),
    addThreadLabel: (name) => port.addThreadLabel(name),
    removeThreadLabel: (name) => port.removeThreadLabel(name),
    deletesMergedBranches: () => port.deletesMergedBranches(),
    checks: port.checks,
    reviews: port.reviews,
  };
  return { port: recorded, writes };
}

export interface RunOutcome {
  /** The thread's Blueprint state after the run, or null when it has none. */
  latest: ThreadStateRecord | null;
  /** The newest comment holding a plan. */
  plan: ThreadStateRecord | null;
  /** Whether this run wrote the latest state (false: it only replied, or did nothing). */
  changed: boolean;
  /** This run ended in a failed plan or build. */
  failed: boolean;
  /** Why, in the words the thread was told. */
  error: string | null;
  pullRequestUrl: string | null;
  replies: string[];
}

/** Reads the thread after a run: where it stands, and whether this run is what put it there. */
export async function readRunOutcome(port: ThreadPort, writes: ThreadWrites, stateKey: StateKey): Promise<RunOutcome> {
  const lookup = findThreadState(await port.comments(), threadSeal(stateKey, port));
  if (lookup.kind === "corrupt") {
    return {
      latest: null,
      plan: null,
      changed: false,
      failed: false,
      error: `the latest Blueprint comment has a damaged state marker: ${lookup.reason}`,
      pullRequestUrl: null,
      replies: writes.replies,
    };
  }
  if (lookup.kind === "none") {
    return {
      latest: null,
      plan: null,
      changed: false,
      failed: false,
      error: null,
      pullRequestUrl: null,
      replies: writes.replies,
    };
  }
  const { latest, plan } = lookup;
  const changed = writes.touched.has(latest.comment.id);
  const failed = changed && latest.state.status === "failed";
  const { state } = latest;
  const pullRequestUrl = state.head
    ? `${port.repo.htmlUrl}/pull/${port.number}`
    : state.pullRequest
      ? `${port.repo.htmlUrl}/pull/${state.pullRequest}`
      : null;
  return { latest, plan, changed, failed, error: failed ? state.error : null, pullRequestUrl, replies: writes.replies };
}

/**
 * Wraps a logger so the errors of one run are kept: a job that failed in a way no use case could
 * put in a state (it only left a short reply) must still fail the Action's step or the CLI's exit code.
 */
export function recordErrors(log: Logger): { log: Logger; errors: string[] } {
  const errors: string[] = [];
  return {
    errors,
    log: {
      info: (object, message) => log.info(object, message),
      warn: (object, message) => log.warn(object, message),
      error(object, message) {
        const cause = (object as { err?: unknown }).err;
        errors.push(
          [message, cause instanceof Error ? cause.message : undefined].filter(Boolean).join(": ") ||
            "an error was logged",
        );
        log.error(object, message);
      },
    },
  };
}
