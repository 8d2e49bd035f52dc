import { describe, expect, it } from "vitest";
import { leanHistory, type ContextPolicy } from "../../src/agent/context.js";
import { repairHistory } from "../../src/agent/history.js";
import type { ChatMessage } from "../../src/agent/model.js";

const policy: ContextPolicy = { keepRecent: 2, minCharsToShrink: 50, keepLines: 2 };
const big = (label: string) => Array.from({ length: 40 }, (_, i) => `${label} line ${i + 1}`).join("\n");

/** A history of tool turns: each entry is [tool name, args, result]. */
function history(turns: Array<[string, Record<string, unknown>, string]>): ChatMessage[] {
  const messages: ChatMessage[] = [
    { role: "system", content: "system" },
    { role: "user", content: "task" },
  ];
  turns.forEach(([name, args, result], i) => {
    messages.push({
      role: "assistant",
      content: null,
      tool_calls: [{ id: `c${i}`, type: "function", function: { name, arguments: JSON.stringify(args) } }],
    });
    messages.push({ role: "tool", tool_call_id: `c${i}`, content: result });
  });
  return messages;
}
/** A read_file result: numbered lines `from`..`to`. */
const numbered = (label: string, from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `${String(from + i).padStart(6)}\t${label} line ${from + i}`).join(
    "\n",
  );
const tools = (messages: ChatMessage[]) => messages.filter((m) => m.role === "tool").map((m) => String(m.content));

describe("leanHistory", () => {
  it("turns an earlier read whose lines a later turn read again into a reference", () => {
    const lean = leanHistory(
      history([
        ["read_file", { path: "a.ts" }, numbered("a-old", 1, 40)],
        ["read_file", { path: "b.ts" }, numbered("b", 1, 40)],
        ["read_file", { path: "./a.ts" }, numbered("a-new", 1, 40)],
      ]),
      policy,
    );
    const [first, second, third] = tools(lean);
    expect(first).toBe("[shrunk: a.ts lines 1-40 were read again later; see the newer result]");
    expect(second).toBe(numbered("b", 1, 40));
    expect(third).toBe(numbered("a-new", 1, 40));
  });

  it("keeps an earlier read whose lines later reads of the same file do not all show", () => {
    const early = numbered("a", 1, 40);
    const lean = tools(
      leanHistory(
        history([
          ["read_file", { path: "a.ts" }, early],
          ["read_file", { path: "a.ts", start_line: 30 }, numbered("a", 30, 70)],
        ]),
        policy,
      ),
    );
    expect(lean[0]).toBe(early);
    // Two later windows that together cover it do shrink it.
    const covered = tools(
      leanHistory(
        history([
          ["read_file", { path: "a.ts" }, early],
          ["read_file", { path: "a.ts", start_line: 20 }, numbered("a", 20, 60)],
          ["read_file", { path: "a.ts" }, numbered("a", 1, 25)],
        ]),
        policy,
      ),
    );
    expect(covered[0]).toBe("[shrunk: a.ts lines 1-40 were read again later; see the newer result]");
  });

  it("leaves the history alone until more than twice keepRecent results are whole, then keeps only the newest whole", () => {
    const four = history(["1", "2", "3", "4"].map((n) => ["read_file", { path: `${n}.ts` }, big(n)]));
    expect(leanHistory(four, policy)).toEqual(four);
    const five = history(["1", "2", "3", "4", "5"].map((n) => ["read_file", { path: `${n}.ts` }, big(n)]));
    const lean = tools(leanHistory(five, policy));
    expect(lean.slice(0, 3).every((content) => content.startsWith('[shrunk: read_file({"path":'))).toBe(true);
    expect(lean[0]).toContain("1 line 1\n1 line 2");
    expect(lean[0]).not.toContain("1 line 3");
    expect(lean.slice(3)).toEqual([big("4"), big("5")]);
  });

  it("never shrinks short results, the system prompt or the task", () => {
    const messages = history(["1", "2", "3", "4", "5", "6"].map((n) => ["search", { pattern: n }, `${n}: short`]));
    const lean = leanHistory(messages, policy);
    expect(lean).toEqual(messages);
    expect(leanHistory(history([["read_file", { path: "x" }, big("x")]]), policy).slice(0, 2)).toEqual(
      messages.slice(0, 2),
    );
  });

  it("is stable: leaning a lean history changes nothing, and the result stays a valid tool history", () => {
    const messages = history(
      ["1", "2", "3", "4", "5", "6", "7"].map((n) => ["read_file", { path: `${n}.ts` }, big(n)]),
    );
    const once = leanHistory(messages, policy);
    expect(leanHistory(once, policy)).toEqual(once);
    expect(repairHistory(once)).toEqual(once);
  });
});

describe("a planning run with lean context", () => {
  it("sends fewer prompt characters than the raw history over a long session", async () => {
    const { runAgent } = await import("../../src/agent/loop.js");
    const { createCommandRunner } = await import("../../src/workspace/command-runner.js");
    const { mkdtempSync, writeFileSync } = await import("node:fs");
    const os = await import("node:os");
    const path = await import("node:path");
    const { execFileSync } = await import("node:child_process");
    const root = mkdtempSync(path.join(os.tmpdir(), "lean-"));
    for (let i = 0; i < 12; i++)
      writeFileSync(path.join(root, `f${i}.ts`), Array.from({ length: 5 }, () => big(`file${i}`)).join("\n"));
    execFileSync("git", ["init", "-q"], { cwd: root });

    const session = async (lean: boolean) => {
      const sizes: number[] = [];
      let n = 0;
      const outcome = await runAgent({
        model: {
          model: "scripted",
          async complete(messages) {
            sizes.push(JSON.stringify(messages).length);
            n++;
            const call =
              n <= 20
                ? { name: "read_file", arguments: JSON.stringify({ path: `f${n % 12}.ts` }) }
                : { name: "ask_user", arguments: JSON.stringify({ question: "done?" }) };
            return {
              message: {
                role: "assistant",
                content: null,
                refusal: null,
                tool_calls: [{ id: `c${n}`, type: "function", function: call }],
              },
              usage: { prompt: 0, completion: 0, cached: 0 },
            };
          },
        },
        messages: [
          { role: "system", content: "s" },
          { role: "user", content: "t" },
        ],
        context: {
          root,
          mode: "plan",
          runner: createCommandRunner(),
          filesRead: new Set(),
          audit: [],
          allowWorkflowWrites: false,
        },
        ...(lean ? {} : { contextPolicy: false as const }),
      });
      expect(outcome.kind).toBe("question");
      return sizes.reduce((a, b) => a + b, 0);
    };
    const naive = await session(false);
    const lean = await session(true);
    // The 30-turn target (≤ 60 %) is measured by `npm run bench`; this 20-turn run only has to be clearly smaller.
    expect(lean).toBeLessThan(naive * 0.7);
  });
});
