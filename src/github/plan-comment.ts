import { renderPlanBody, escapeHtml, neutraliseComments } from "../plan/render.js";
import {
  commentSeal,
  encodeStateMarker,
  MARKER_PREFIX,
  readStateMarker,
  type CommentSeal,
  type ThreadSeal,
} from "./state-marker.js";
import type { ThreadState } from "../workflow/state.js";
import type { ThreadComment } from "../workflow/ports.js";
import type { TokenUsage } from "../shared/model-usage.js";
import { renderFollowUpSection } from "./follow-up-section.js";

export const APPROVAL_HELP =
  "**To approve**, comment `/build` (on a pull request, an approving review works too); `/build S2` builds S2 and the steps it needs. " +
  "**To revise**, comment `/revise <feedback>` or `/plan <new instructions>`.";

/**
 * The plan comment: heading with the revision, status, the rendered plan, how to answer, and the hidden state signed
 * for the comment that holds it.
 */
export function renderPlanComment(
  state: ThreadState,
  seal: CommentSeal,
  extras: { statusLine?: string; report?: string } = {},
): string {
  if (!state.plan) throw new Error("renderPlanComment needs a plan");
  const heading = `## 📋 Plan v${state.revision}: ${escapeHtml(state.plan.title)}`;
  // The revision diff, status line and report quote model and error text: no hidden comments from them.
  const status = neutraliseComments(extras.statusLine ?? defaultStatusLine(state));
  const parts = [heading];
  if (state.changes) parts.push(neutraliseComments(state.changes));
  parts.push(status, renderPlanBody(state.plan, state.steps));
  if (state.followUp) parts.push(renderFollowUpSection(state.followUp, state.steps));
  if (extras.report) parts.push(neutraliseComments(extras.report));
  if (state.status === "pending" || state.status === "failed") parts.push(`---\n${APPROVAL_HELP}`);
  parts.push(footer(state), encodeStateMarker(state, seal));
  return parts.join("\n\n");
}

/**
 * A plan comment as it stands, with another status line and state: everything else in it (the
 * build report below the plan, a person's edits) stays as it reads. The status line is the first
 * quoted paragraph after the heading and the revision's changes; without one, it goes under the heading.
 */
export function withStatusLine(body: string, statusLine: string, state: ThreadState, seal: CommentSeal): string {
  const marker = body.lastIndexOf(MARKER_PREFIX);
  const paragraphs = (marker === -1 ? body : body.slice(0, marker)).split("\n\n");
  const at = paragraphs.findIndex((paragraph, index) => index > 0 && index <= 2 && paragraph.startsWith("> "));
  const line = neutraliseComments(statusLine);
  if (at === -1) paragraphs.splice(1, 0, line);
  else paragraphs[at] = line;
  return `${paragraphs.join("\n\n")}${marker === -1 ? "\n\n" : ""}${encodeStateMarker(state, seal)}`;
}

/** A plan comment as it stands, with another state in its hidden marker: nothing people see changes. */
export function withState(body: string, state: ThreadState, seal: CommentSeal): string {
  const marker = body.lastIndexOf(MARKER_PREFIX);
  return `${marker === -1 ? `${body}\n\n` : body.slice(0, marker)}${encodeStateMarker(state, seal)}`;
}

export function defaultStatusLine(state: ThreadState): string {
  if (state.stale && state.status === "pending")
    return `> ⚠️ **Stale:** ${state.stale} Comment \`/plan\` to re-plan or \`/build --force\` to build it anyway.`;
  switch (state.status) {
    case "pending":
      return "> ✅ **Ready for review.**";
    case "building":
      return "> ⏳ **Building…**";
    case "built":
      // A build whose checks failed keeps saying so (the error names them).
      return state.error ? `> ⚠️ **Built, but ${state.error}**` : "> 🎉 **Built.**";
    case "failed":
      return `> ❌ **Build stopped:** ${state.error ?? "see the report below."} Comment \`/build\` to resume from the first step not done.`;
    case "superseded":
      return "> 🗄️ **Superseded** by a newer revision below.";
    case "cancelled":
      // The reason says who stopped it: someone's /cancel, or Blueprint shutting down.
      return `> ⏹️ **Stopped:** ${state.error ?? "cancelled."}${/[.!?]$/.test(state.error ?? ".") ? "" : "."} Everything already pushed stays; \`/build\` resumes.`;
    default:
      return "";
  }
}

function footer(state: ThreadState): string {
  const bits = [`revision ${state.revision}`, `base \`${state.base.branch}\` @ \`${state.base.sha.slice(0, 7)}\``];
  if (state.head) bits.push(`head \`${state.head.ref}\` @ \`${state.head.sha.slice(0, 7)}\``);
  bits.push(`requested by @${state.requestedBy}`);
  if (state.model) bits.push(`model \`${state.model}\` (\`/plan --model\`)`);
  if (state.planHash) bits.push(`plan \`${state.planHash}\``);
  if (state.instructionFiles.length > 0)
    bits.push(`follows ${state.instructionFiles.map((file) => `\`${file.replaceAll("`", "'")}\``).join(", ")}`);
  return `<sub>Blueprint · ${bits.join(" · ")}</sub>`;
}

/** A status comment that is not (yet) a plan: planning, a question, or a failure. */
export function renderStatusComment(state: ThreadState, seal: CommentSeal, heading: string, body: string): string {
  return [heading, body, encodeStateMarker(state, seal)].join("\n\n");
}

export function renderUsage(usage: TokenUsage): string {
  const format = (n: number) => n.toLocaleString("en-US");
  const over =
    usage.requests === 0
      ? "; no model request was answered"
      : ` over ${usage.requests} answered model request${usage.requests === 1 ? "" : "s"}`;
  return `${format(usage.prompt)} prompt tokens (${format(usage.cached)} cached) + ${format(usage.completion)} completion tokens${over}`;
}

export interface ThreadStateRecord {
  comment: ThreadComment;
  state: ThreadState;
}

export type ThreadStateLookup =
  | { kind: "none" }
  /** `latest`: the newest state (it carries the thread's memory); `plan`: the newest comment holding a plan. */
  | { kind: "found"; latest: ThreadStateRecord; plan: ThreadStateRecord | null; all: ThreadStateRecord[] }
  | { kind: "corrupt"; comment: ThreadComment; reason: string };

/**
 * The newest state written by this installation; markers in anyone else's comments are ignored,
 * and a marker in its own comments counts only when it is signed for that very comment.
 */
export function findThreadState(comments: ThreadComment[], seal: ThreadSeal): ThreadStateLookup {
  const records: ThreadStateRecord[] = [];
  let newestCorrupt: { comment: ThreadComment; reason: string } | null = null;
  for (const comment of comments) {
    if (!comment.own) continue;
    const read = readStateMarker(comment.body, commentSeal(seal, comment.id));
    if (read.kind === "ok") records.push({ comment, state: read.state });
    else if (read.kind === "corrupt") newestCorrupt = { comment, reason: read.reason };
  }
  const latest = records.at(-1);
  if (newestCorrupt && (!latest || newestCorrupt.comment.id > latest.comment.id)) {
    return { kind: "corrupt", ...newestCorrupt };
  }
  if (!latest) return { kind: "none" };
  const plan = records.filter((record) => record.state.plan !== null).at(-1) ?? null;
  return { kind: "found", latest, plan, all: records };
}
