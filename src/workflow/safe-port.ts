import type { Redactor } from "../agent/redact.js";
import { fitComment } from "../github/comment-size.js";
import {
  commentSeal,
  encodeStateMarker,
  MARKER_PREFIX,
  readStateMarker,
  threadSeal,
  type CommentSeal,
  type StateKey,
} from "../github/state-marker.js";
import { planHash } from "../plan/hash.js";
import type { CheckRunOutput, CheckRunPort, ReviewPort, ThreadPort } from "./ports.js";

/**
 * Every body Blueprint posts passes the redactor and fits GitHub's size limit, whichever use case
 * wrote it. The hidden state marker is redacted too: it is compressed, so patterns cannot see into
 * it, yet anyone who can read the thread can decode it.
 *
 * A state marker is only ever written signed for the comment that holds it: a new comment gets its
 * state in an edit once GitHub has given it an id (anything marker-like in a new comment is quoted
 * text, and is neutralised), and a marker signed for any other comment is a bug that stops the job
 * rather than reach GitHub.
 */
export function safePort(port: ThreadPort, redact: Redactor, stateKey: StateKey): ThreadPort {
  const seal = threadSeal(stateKey, port);
  const stateless = (body: string) => fitComment(redact(body.replaceAll(MARKER_PREFIX, "&lt;!-- blueprint:state")));
  const clean = (body: string, comment: number) =>
    fitComment(redactWithState(body, redact, commentSeal(seal, comment)));
  return {
    repo: port.repo,
    number: port.number,
    info: () => port.info(),
    comments: () => port.comments(),
    postComment: async (body) => port.postComment(stateless(body)),
    updateComment: async (id, body) => port.updateComment(id, clean(body, id)),
    reactToComment: (id, reaction) => port.reactToComment(id, reaction),
    permission: (login) => port.permission(login),
    teamMember: (org, teamSlug, login) => port.teamMember(org, teamSlug, login),
    account: (login) => port.account(login),
    gitToken: () => port.gitToken(),
    commitUrl: (sha) => port.commitUrl(sha),
    upsertPullRequest: (draft) =>
      port.upsertPullRequest({ ...draft, title: redact(draft.title), body: stateless(draft.body) }),
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
    checks: port.checks ? redactedChecks(port.checks, redact) : null,
    reviews: port.reviews ? redactedReviews(port.reviews, stateless) : null,
  };
}

/** Replies in review threads, and comments on a pull request, are posted like any comment: redacted, stateless. */
function redactedReviews(reviews: ReviewPort, stateless: (body: string) => string): ReviewPort {
  return {
    ...reviews,
    reply: (pullRequest, commentId, body) => reviews.reply(pullRequest, commentId, stateless(body)),
    comment: (pullRequest, body) => reviews.comment(pullRequest, stateless(body)),
  };
}

/** A check run's words reach GitHub redacted like any comment: title, summary, text and each annotation. */
function redactedChecks(checks: CheckRunPort, redact: Redactor): CheckRunPort {
  const clean = <T extends CheckRunOutput>(run: T): T => ({
    ...run,
    title: redact(run.title),
    summary: redact(run.summary),
    ...(run.text ? { text: redact(run.text) } : {}),
    ...(run.annotations
      ? {
          annotations: run.annotations.map((note) => ({
            ...note,
            message: redact(note.message),
            ...(note.title ? { title: redact(note.title) } : {}),
          })),
        }
      : {}),
  });
  return {
    find: (headSha, name, externalId) => checks.find(headSha, name, externalId),
    get: (id) => checks.get(id),
    failures: (headSha) => checks.failures(headSha),
    create: (run) => checks.create(clean(run)),
    update: (id, run) => checks.update(id, clean(run)),
    isOwnApp: (app) => checks.isOwnApp(app),
    buttons: checks.buttons,
  };
}

/** Redacts the visible text and every string inside the state marker (re-encoded only when something changed). */
export function redactWithState(body: string, redact: Redactor, seal: CommentSeal): string {
  const read = readStateMarker(body, seal);
  if (read.kind === "none") return redact(body);
  if (read.kind === "corrupt")
    throw new Error(`refusing to write a state marker to comment ${seal.comment}: ${read.reason}`);
  const start = body.lastIndexOf(MARKER_PREFIX);
  const end = body.indexOf("-->", start) + 3;
  const state = redactStrings(read.state, redact);
  const unchanged = JSON.stringify(state) === JSON.stringify(read.state);
  if (state.plan && !unchanged) state.planHash = planHash(state.plan);
  const marker = unchanged ? body.slice(start, end) : encodeStateMarker(state, seal);
  return redact(body.slice(0, start)) + marker + redact(body.slice(end));
}

function redactStrings<T>(value: T, redact: Redactor): T {
  if (typeof value === "string") return redact(value) as T;
  if (Array.isArray(value)) return value.map((item) => redactStrings(item, redact)) as T;
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactStrings(item, redact)])) as T;
  }
  return value;
}
