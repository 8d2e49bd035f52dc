import type OpenAI from "openai";
import type { ChatMessage } from "./model.js";

/**
 * Makes the history acceptable to strict endpoints: every `tool` message answers a `tool_calls`
 * id of an earlier assistant message, and every tool call gets an answer.
 */
export function repairHistory(messages: ChatMessage[]): ChatMessage[] {
  const repaired: ChatMessage[] = [];
  let open = new Set<string>();
  const closeOpenCalls = () => {
    for (const id of open)
      repaired.push({ role: "tool", tool_call_id: id, content: "Error: this tool call was not answered." });
    open = new Set();
  };
  for (const message of messages) {
    if (message.role === "tool") {
      if (!open.has(message.tool_call_id)) continue; // orphan: it answers nothing
      open.delete(message.tool_call_id);
      repaired.push(message);
      continue;
    }
    closeOpenCalls();
    repaired.push(message);
    if (message.role === "assistant" && message.tool_calls) {
      open = new Set(message.tool_calls.map((call) => call.id));
    }
  }
  closeOpenCalls();
  return repaired;
}

type FunctionToolCall = OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;

/** Above this, a call's arguments are not kept whole: the history is sent again with every request. */
const MAX_KEPT_ARGUMENT_CHARS = 20_000;
/** Strings longer than this are what gets elided from oversized arguments. */
const MAX_KEPT_VALUE_CHARS = 1_000;
/** How deep into the arguments long strings are looked for (tool arguments are shallow). */
const MAX_ELIDE_DEPTH = 4;

/**
 * The tool call as the history keeps it. Arguments over MAX_KEPT_ARGUMENT_CHARS (a 1 MB file body,
 * say) would otherwise be sent with every later request: their long strings are replaced by a
 * note, or, if that is not enough, the whole arguments are. The arguments stay a JSON string, as
 * strict endpoints require, even when a server sent an object.
 */
export function toolCallForHistory(call: FunctionToolCall): { call: FunctionToolCall; elidedChars: number } {
  const raw: unknown = call.function.arguments;
  const text = typeof raw === "string" ? raw : raw === undefined || raw === null ? "" : (JSON.stringify(raw) ?? "");
  if (text.length <= MAX_KEPT_ARGUMENT_CHARS) {
    return { call: text === raw ? call : { ...call, function: { ...call.function, arguments: text } }, elidedChars: 0 };
  }
  let kept = JSON.stringify({ elided: `${text.length} characters of arguments, not kept in the history` });
  try {
    const shortened = JSON.stringify(elideLongStrings(JSON.parse(text), 0));
    if (shortened.length <= MAX_KEPT_ARGUMENT_CHARS) kept = shortened;
  } catch {
    // Not JSON: the whole arguments are replaced.
  }
  return { call: { ...call, function: { ...call.function, arguments: kept } }, elidedChars: text.length - kept.length };
}

function elideLongStrings(value: unknown, depth: number): unknown {
  if (typeof value === "string") {
    return value.length > MAX_KEPT_VALUE_CHARS ? `[${value.length} characters, not kept in the history]` : value;
  }
  if (depth >= MAX_ELIDE_DEPTH || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => elideLongStrings(item, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, elideLongStrings(item, depth + 1)]));
}
