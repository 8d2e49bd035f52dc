import { describe, expect, it } from "vitest";
import { toolCallForHistory } from "../../src/agent/history.js";

const call = (args: unknown) => ({
  id: "c1",
  type: "function" as const,
  function: { name: "write_file", arguments: args as string },
});
const argsOf = (args: unknown) => toolCallForHistory(call(args));

describe("toolCallForHistory", () => {
  it("keeps ordinary arguments untouched", () => {
    const original = call('{"path":"a.ts","content":"x"}');
    expect(toolCallForHistory(original)).toEqual({ call: original, elidedChars: 0 });
    expect(toolCallForHistory(original).call).toBe(original);
  });

  it("turns arguments sent as an object, or missing, into a JSON string", () => {
    expect(argsOf({ path: "a.ts" }).call.function.arguments).toBe('{"path":"a.ts"}');
    expect(argsOf(undefined).call.function.arguments).toBe("");
  });

  it("elides the long strings of oversized JSON arguments and keeps the rest", () => {
    const raw = JSON.stringify({
      path: "big.txt",
      content: "y".repeat(50_000),
      steps: [{ details: "z".repeat(30_000), id: "S1" }],
    });
    const kept = argsOf(raw);
    expect(JSON.parse(kept.call.function.arguments)).toEqual({
      path: "big.txt",
      content: "[50000 characters, not kept in the history]",
      steps: [{ details: "[30000 characters, not kept in the history]", id: "S1" }],
    });
    expect(kept.elidedChars).toBe(raw.length - kept.call.function.arguments.length);
    expect(kept.call.id).toBe("c1");
  });

  it("replaces oversized arguments that are not JSON, or are many short strings, with a JSON note", () => {
    for (const raw of [
      '{"path": "' + "x".repeat(30_000),
      JSON.stringify(Array.from({ length: 5000 }, (_, i) => `item ${i}`)),
    ]) {
      const kept = argsOf(raw);
      expect(JSON.parse(kept.call.function.arguments)).toEqual({
        elided: `${raw.length} characters of arguments, not kept in the history`,
      });
    }
  });
});
