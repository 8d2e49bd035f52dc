import type { ChatMessage } from "./model.js";

/**
 * Makes the history acceptable to strict endpoints: every `tool` message answers a `tool_calls`
 * id of an earlier assistant message, and every tool call gets an answer.
 */
export function repairHistory(messages: ChatMessage[]): ChatMessage[] {
  const repaired: ChatMessage[] = [];
  let open = new Set<string>();
  const closeOpenCalls = () => {
    for (const id of open) repaired.push({ role: "tool", tool_call_id: id, content: "Error: this tool call was not answered." });
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
