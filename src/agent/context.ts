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
 * Keeps a run's history lean (seed 002 §3.2): a file read again makes its earlier reads a
 * reference, and once more than 2×keepRecent tool results are whole, all but the newest
 * keepRecent shrink to a head and a hint. Shrinking in batches keeps the prompt prefix stable
 * between batches, so providers' prompt caching keeps working.
 */
export function leanHistory(messages: ChatMessage[], policy: ContextPolicy = DEFAULT_CONTEXT_POLICY): ChatMessage[] {
  const calls = new Map<string, { name: string; args: string }>();
  for (const message of messages) {
    if (message.role === "assistant" && message.tool_calls) {
      for (const call of message.tool_calls) if (call.type === "function") calls.set(call.id, { name: call.function.name, args: call.function.arguments });
    }
  }
  const toolIndexes = messages.flatMap((message, index) => (message.role === "tool" ? [index] : []));
  const out = [...messages];

  // 1. A file read again: the earlier reads of that same path become a reference.
  const lastReadOf = new Map<string, number>();
  for (const index of toolIndexes) {
    const path = readPath(calls.get(toolCallId(out[index]))?.args);
    if (path) lastReadOf.set(path, index);
  }
  for (const index of toolIndexes) {
    const message = out[index];
    const call = calls.get(toolCallId(message));
    const path = call?.name === "read_file" ? readPath(call.args) : null;
    if (path && lastReadOf.get(path) !== index && isWhole(message)) {
      out[index] = withContent(message, `${SHRUNK}${path} was read again later; see the newer result]`);
    }
  }

  // 2. In batches: shrink all but the newest results once too many are whole.
  const whole = toolIndexes.filter((index) => isWhole(out[index]) && contentOf(out[index]).length >= policy.minCharsToShrink);
  if (whole.length > 2 * policy.keepRecent) {
    for (const index of whole.slice(0, whole.length - policy.keepRecent)) {
      const message = out[index];
      const call = calls.get(toolCallId(message));
      out[index] = withContent(message, shrink(contentOf(message), call, policy.keepLines));
    }
  }
  return out;
}

function shrink(content: string, call: { name: string; args: string } | undefined, keepLines: number): string {
  const lines = content.split("\n");
  const what = call ? `${call.name}(${call.args.length > 200 ? `${call.args.slice(0, 200)}…` : call.args})` : "an earlier tool call";
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
const isWhole = (message: ChatMessage | undefined) => message?.role === "tool" && !contentOf(message).startsWith(SHRUNK);
const withContent = (message: ChatMessage | undefined, content: string): ChatMessage =>
  message?.role === "tool" ? { ...message, content } : { role: "tool", tool_call_id: "", content };
