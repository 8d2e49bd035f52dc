import type { Redactor } from "../agent/redact.js";
import { fitComment } from "../github/comment-size.js";
import { encodeStateMarker, MARKER_PREFIX, readStateMarker } from "../github/state-marker.js";
import { planHash } from "../plan/hash.js";
import type { ThreadPort } from "./ports.js";


/**
 * Every body Blueprint posts passes the redactor and fits GitHub's size limit, whichever use case
 * wrote it. The hidden state marker is redacted too: it is compressed, so patterns cannot see into
 * it, yet anyone who can read the thread can decode it.
 */
export function safePort(port: ThreadPort, redact: Redactor): ThreadPort {
  const clean = (body: string) => fitComment(redactWithState(body, redact));
  return {
    repo: port.repo,
    number: port.number,
    info: () => port.info(),
    comments: () => port.comments(),
    postComment: (body) => port.postComment(clean(body)),
    updateComment: (id, body) => port.updateComment(id, clean(body)),
    reactToComment: (id, reaction) => port.reactToComment(id, reaction),
    permission: (login) => port.permission(login),
    teamMember: (org, teamSlug, login) => port.teamMember(org, teamSlug, login),
    gitToken: () => port.gitToken(),
    commitUrl: (sha) => port.commitUrl(sha),
    upsertPullRequest: (draft) => port.upsertPullRequest({ ...draft, title: redact(draft.title), body: clean(draft.body) }),
    canWriteWorkflows: () => port.canWriteWorkflows(),
    reviewComments: (id) => port.reviewComments(id),
    minimizeComment: (comment) => port.minimizeComment(comment),
  };
}

/** Redacts the visible text and every string inside the state marker (re-encoded only when something changed). */
export function redactWithState(body: string, redact: Redactor): string {
  const read = readStateMarker(body);
  if (read.kind !== "ok") return redact(body);
  const start = body.lastIndexOf(MARKER_PREFIX);
  const end = body.indexOf("-->", start) + 3;
  const state = redactStrings(read.state, redact);
  const unchanged = JSON.stringify(state) === JSON.stringify(read.state);
  if (state.plan && !unchanged) state.planHash = planHash(state.plan);
  const marker = unchanged ? body.slice(start, end) : encodeStateMarker(state);
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


