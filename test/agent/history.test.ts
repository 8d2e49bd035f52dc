import { describe, expect, it } from "vitest";
import { repairHistory } from "../../src/agent/history.js";
import type { ChatMessage } from "../../src/agent/model.js";

const call = (id: string, name = "read_file") => ({
  id,
  type: "function" as const,
  function: { name, arguments: "{}" },
});
const assistantCalls = (...ids: string[]): ChatMessage => ({
  role: "assistant",
  content: null,
  tool_calls: ids.map((id) => call(id)),
});
const toolAnswer = (id: string, content = `result ${id}`): ChatMessage => ({ role: "tool", tool_call_id: id, content });

describe("repairHistory", () => {
  it("leaves a valid history unchanged", () => {
    const history: ChatMessage[] = [
      { role: "system", content: "sys" },
      { role: "user", content: "Step S1: do it" },
      assistantCalls("a", "b"),
      toolAnswer("b"),
      toolAnswer("a"),
      { role: "assistant", content: "done" },
      { role: "user", content: "next" },
    ];
    const snapshot = structuredClone(history);
    const repaired = repairHistory(history);
    expect(repaired).toEqual(snapshot);
    expect(history).toEqual(snapshot); // input not mutated
  });

  it("drops tool messages that answer no call", () => {
    const repaired = repairHistory([
      { role: "user", content: "hi" },
      toolAnswer("ghost"),
      assistantCalls("a"),
      toolAnswer("a"),
      toolAnswer("a", "duplicate answer"),
      toolAnswer("other"),
    ]);
    expect(repaired).toEqual([{ role: "user", content: "hi" }, assistantCalls("a"), toolAnswer("a")]);
  });

  it("drops a tool answer that arrives after the conversation moved on", () => {
    const repaired = repairHistory([assistantCalls("a"), { role: "user", content: "interrupt" }, toolAnswer("a")]);
    expect(repaired).toEqual([
      assistantCalls("a"),
      { role: "tool", tool_call_id: "a", content: "Error: this tool call was not answered." },
      { role: "user", content: "interrupt" },
    ]);
  });

  it("answers unanswered calls with an Error: tool message, right after their assistant turn", () => {
    const repaired = repairHistory([assistantCalls("a", "b"), toolAnswer("a"), assistantCalls("c"), toolAnswer("c")]);
    expect(repaired).toEqual([
      assistantCalls("a", "b"),
      toolAnswer("a"),
      { role: "tool", tool_call_id: "b", content: "Error: this tool call was not answered." },
      assistantCalls("c"),
      toolAnswer("c"),
    ]);
  });

  it("answers calls left open at the end of the history", () => {
    const repaired = repairHistory([{ role: "user", content: "go" }, assistantCalls("x", "y")]);
    expect(repaired.slice(2)).toEqual([
      { role: "tool", tool_call_id: "x", content: "Error: this tool call was not answered." },
      { role: "tool", tool_call_id: "y", content: "Error: this tool call was not answered." },
    ]);
    for (const message of repaired.slice(2)) {
      expect(
        message.role === "tool" && typeof message.content === "string" && message.content.startsWith("Error:"),
      ).toBe(true);
    }
  });

  it("returns an empty history for an empty input", () => {
    expect(repairHistory([])).toEqual([]);
  });
});
