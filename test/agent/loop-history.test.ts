import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runAgent } from "../../src/agent/loop.js";
import { createModelClient, type ChatMessage } from "../../src/agent/model.js";
import type { ToolContext } from "../../src/tools/tool.js";
import { createCommandRunner } from "../../src/workspace/command-runner.js";
import { tempDir } from "../helpers/git-repo.js";
import {
  samplePlan,
  startModelServer,
  type ModelRequest,
  type ModelServer,
  type Script,
} from "../helpers/model-server.js";

/**
 * The loop repairs the history before every request (strict endpoints answer 400 otherwise):
 * checked on the wire, request by request, by a check written independently of the repair.
 */

let server: ModelServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

/**
 * What a strict endpoint would reject: a tool call without its answer right after, an answer to no call, an answer
 * given twice.
 */
function malformations(messages: ModelRequest["messages"]): string[] {
  const problems: string[] = [];
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index];
    if (message?.role === "tool") {
      problems.push(`message ${index} answers ${message.tool_call_id ?? "?"}, but follows no tool call`);
      continue;
    }
    if (message?.role !== "assistant" || !message.tool_calls?.length) continue;
    const called = new Set(message.tool_calls.map((call) => call.id));
    const answered = new Set<string>();
    let next = index + 1;
    for (; messages[next]?.role === "tool"; next++) {
      const id = messages[next]?.tool_call_id ?? "";
      if (!called.has(id)) problems.push(`message ${next} answers ${id}, which message ${index} did not call`);
      else if (answered.has(id)) problems.push(`message ${next} answers ${id} a second time`);
      answered.add(id);
    }
    for (const id of called) if (!answered.has(id)) problems.push(`call ${id} of message ${index} has no answer`);
    index = next - 1;
  }
  return problems;
}

function planContext(): ToolContext {
  const root = tempDir("bp-history-");
  writeFileSync(path.join(root, "README.md"), "# Demo\n");
  execFileSync("git", ["init", "-q"], { cwd: root });
  return {
    root,
    mode: "plan",
    runner: createCommandRunner(),
    filesRead: new Set(),
    audit: [],
    allowWorkflowWrites: false,
  };
}

async function planRun(script: Script, messages: ChatMessage[]) {
  server = await startModelServer(script);
  const model = createModelClient({
    baseURL: server.url,
    apiKey: "sk-test-0000000000000000",
    model: "m",
    maxRetries: 0,
  });
  const outcome = await runAgent({ model, context: planContext(), messages });
  return { outcome, requests: server.requests };
}

const TASK: ChatMessage[] = [
  { role: "system", content: "plan" },
  { role: "user", content: "Plan: add retry support." },
];
const submit = { toolCalls: [{ name: "submit_plan", arguments: samplePlan() }] };

describe("runAgent repairs the history before every request", () => {
  it("after a turn whose tool calls share one id, no request carries the duplicate answer", async () => {
    const { outcome, requests } = await planRun(
      [
        {
          toolCalls: [
            { id: "dup", name: "list_files", arguments: {} },
            { id: "dup", name: "read_file", arguments: { path: "README.md" } },
          ],
        },
        { toolCalls: [{ name: "read_file", arguments: { path: "README.md" } }] },
        submit,
      ],
      TASK,
    );
    expect(outcome.kind).toBe("plan_submitted");
    expect(requests).toHaveLength(3);
    for (const request of requests) expect(malformations(request.messages)).toEqual([]);
    // The broken turn is still there for the model to see, answered once.
    expect(
      requests[1]?.messages.filter((message) => message.role === "tool" && message.tool_call_id === "dup"),
    ).toHaveLength(1);
  });

  it("a history handed over with an unanswered call and a stray answer is repaired before the first request", async () => {
    const resumed: ChatMessage[] = [
      ...TASK,
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "lost", type: "function", function: { name: "list_files", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "stray", content: "an answer to nothing" },
      { role: "user", content: "Go on." },
    ];
    const { requests } = await planRun([{ toolCalls: [{ name: "list_files", arguments: {} }] }, submit], resumed);
    expect(requests).toHaveLength(2);
    for (const request of requests) expect(malformations(request.messages)).toEqual([]);
    expect(
      requests[0]?.messages.find((message) => message.role === "tool" && message.tool_call_id === "lost")?.content,
    ).toMatch(/^Error:/);
  });
});

describe("runAgent keeps what the model read", () => {
  const bigFile = Array.from({ length: 600 }, (_, i) => `const line${i + 1} = ${i + 1};`).join("\n");
  const read = (start: number, end: number) => ({
    name: "read_file",
    arguments: { path: "big.js", start_line: start, end_line: end },
  });
  const toolContents = (request: ModelRequest | undefined) =>
    (request?.messages ?? []).filter((message) => message.role === "tool").map((message) => String(message.content));

  it("two windows of one file read in one batch both stay whole; a later read shrinks only the window whose lines it shows again", async () => {
    server = await startModelServer([
      { toolCalls: [read(1, 300), read(301, 600)] },
      { toolCalls: [read(1, 300)] },
      submit,
    ]);
    const context = planContext();
    writeFileSync(path.join(context.root, "big.js"), bigFile);
    const model = createModelClient({
      baseURL: server.url,
      apiKey: "sk-test-0000000000000000",
      model: "m",
      maxRetries: 0,
    });
    const outcome = await runAgent({ model, context, messages: TASK });
    expect(outcome.kind).toBe("plan_submitted");
    const [afterBatch, afterReread] = [toolContents(server.requests[1]), toolContents(server.requests[2])];
    // The batch: both windows, whole.
    expect(afterBatch).toHaveLength(2);
    expect(afterBatch[0]).toContain("const line300 = 300;");
    expect(afterBatch[1]).toContain("const line301 = 301;");
    // Lines 1-300 read again: that window is a reference, the other stays whole.
    expect(afterReread[0]).toBe("[shrunk: big.js lines 1-300 were read again later; see the newer result]");
    expect(afterReread[1]).toContain("const line600 = 600;");
    expect(afterReread[2]).toContain("const line1 = 1;");
  });
});
