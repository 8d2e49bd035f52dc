import type { ChatMessage } from "./model.js";

export interface ContextPolicy {
  /** Tool results of the most recent calls that always stay whole. */
  keepRecent: number;
  /** Results shorter than this are never shrunk. */
  minCharsToShrink: number;
  /** Lines of a shrunk result that are kept as a reminder. */
  keepLines: number;
}

export const DEFAULT_CONTEXT_POLICY: ContextPolicy = { keepRecent: 5, minCharsToShrink: 600, keepLines: 6 };

const SHRUNK = "[shrunk: ";

/**
 * Keeps a run's history lean (seed 002 §3.2): an earlier read of a file whose every line a later
 * turn's reads show again becomes a reference, and once more than 2×keepRecent tool results are
 * whole, all but the newest keepRecent shrink to a head and a hint. Shrinking in batches keeps the
 * prompt prefix stable between batches, so providers' prompt caching keeps working.
 */
export function leanHistory(messages: ChatMessage[], policy: ContextPolicy = DEFAULT_CONTEXT_POLICY): ChatMessage[] {
  const calls = new Map<string, { name: string; args: string; turn: number }>();
  messages.forEach((message, turn) => {
    if (message.role === "assistant" && message.tool_calls) {
      for (const call of message.tool_calls)
        if (call.type === "function")
          calls.set(call.id, { name: call.function.name, args: call.function.arguments, turn });
    }
  });
  const toolIndexes = messages.flatMap((message, index) => (message.role === "tool" ? [index] : []));
  const out = [...messages];

  // 1. A read whose lines later turns read again: the earlier one becomes a reference.
  shrinkRereadRanges(out, toolIndexes, calls);

  // 2. In batches: shrink all but the newest results once too many are whole; the newest turn's
  // results are never shrunk before the model has seen them.
  const newestTurn = Math.max(-1, ...[...calls.values()].map((call) => call.turn));
  const whole = toolIndexes.filter(
    (index) => isWhole(out[index]) && contentOf(out[index]).length >= policy.minCharsToShrink,
  );
  if (whole.length > 2 * policy.keepRecent) {
    for (const index of whole
      .slice(0, whole.length - policy.keepRecent)
      .filter((index) => calls.get(toolCallId(out[index]))?.turn !== newestTurn)) {
      const message = out[index];
      const call = calls.get(toolCallId(message));
      out[index] = withContent(message, shrink(contentOf(message), call, policy.keepLines));
    }
  }
  return out;
}

/**
 * Reads are compared by the lines they showed (read_file numbers each line), not by path: an
 * earlier read shrinks only when reads of the same file in later turns show every one of its
 * lines. Reads made in one turn (a parallel batch) never shrink one another.
 */
function shrinkRereadRanges(
  out: ChatMessage[],
  toolIndexes: number[],
  calls: Map<string, { name: string; args: string; turn: number }>,
): void {
  const reads = toolIndexes.flatMap((index) => {
    const call = calls.get(toolCallId(out[index]));
    const path = call?.name === "read_file" ? readPath(call.args) : null;
    const lines = path && isWhole(out[index]) ? shownLines(contentOf(out[index])) : [];
    return path && call && lines.length > 0 ? [{ index, path, turn: call.turn, lines }] : [];
  });
  for (const read of reads) {
    const later = new Set(
      reads.filter((other) => other.path === read.path && other.turn > read.turn).flatMap((other) => other.lines),
    );
    if (later.size === 0 || !read.lines.every((line) => later.has(line))) continue;
    const first = read.lines[0] ?? 0;
    const last = read.lines.at(-1) ?? first;
    out[read.index] = withContent(
      out[read.index],
      `${SHRUNK}${read.path} lines ${first}-${last} were read again later; see the newer result]`,
    );
  }
}

/** The line numbers a read_file result shows (its lines start with the number and a tab). */
function shownLines(content: string): number[] {
  return [...content.matchAll(/^ *(\d+)\t/gm)].map((match) => Number(match[1]));
}

function shrink(content: string, call: { name: string; args: string } | undefined, keepLines: number): string {
  const lines = content.split("\n");
  const what = call
    ? `${call.name}(${call.args.length > 200 ? `${call.args.slice(0, 200)}…` : call.args})`
    : "an earlier tool call";
  return `${SHRUNK}${what} returned ${lines.length} lines; the first ${Math.min(keepLines, lines.length)} are kept. Call the tool again if you need the rest]\n${lines.slice(0, keepLines).join("\n")}`;
}

function readPath(args: string | undefined): string | null {
  if (!args) return null;
  try {
    const parsed = JSON.parse(args) as { path?: unknown };
    return typeof parsed.path === "string" ? parsed.path.replace(/^\.\//, "") : null;
  } catch {
    return null;
  }
}

const toolCallId = (message: ChatMessage | undefined) => (message?.role === "tool" ? message.tool_call_id : "");
const contentOf = (message: ChatMessage | undefined) => (typeof message?.content === "string" ? message.content : "");
const isWhole = (message: ChatMessage | undefined) =>
  message?.role === "tool" && !contentOf(message).startsWith(SHRUNK);
const withContent = (message: ChatMessage | undefined, content: string): ChatMessage =>
  message?.role === "tool" ? { ...message, content } : { role: "tool", tool_call_id: "", content };
