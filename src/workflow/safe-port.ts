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
  // Spread and override: the methods that carry text to GitHub are the ones replaced; a new port method that
  // writes text must be overridden here too (ports.ts says so where the port is declared).
  return {
    ...port,
    postComment: async (body) => port.postComment(stateless(body)),
    updateComment: async (id, body) => port.updateComment(id, clean(body, id)),
    upsertPullRequest: (draft) =>
      port.upsertPullRequest({ ...draft, title: redact(draft.title), body: stateless(draft.body) }),
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
  return { ...checks, create: (run) => checks.create(clean(run)), update: (id, run) => checks.update(id, clean(run)) };
}

/**
 * Redacts a body a use case rendered with its state marker at the end, leaving the marker whole: it is base64 of the
 * compressed, signed state, and a token-shaped run inside it (about 1 render in 100,000) would break it. The state's
 * own strings are redacted on the way out (`redactWithState`).
 */
export function redactRendered(redact: Redactor, body: string): string {
  const start = body.lastIndexOf(MARKER_PREFIX);
  return start === -1 ? redact(body) : redact(body.slice(0, start)) + body.slice(start);
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

/** `value` with every string in it redacted (what a state marker holds once written, and what a check shows). */
export function redactStrings<T>(value: T, redact: Redactor): T {
  if (typeof value === "string") return redact(value) as T;
  if (Array.isArray(value)) return value.map((item) => redactStrings(item, redact)) as T;
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactStrings(item, redact)])) as T;
  }
  return value;
}
