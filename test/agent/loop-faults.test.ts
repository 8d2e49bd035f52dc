import { execFileSync } from "node:child_process";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAgent, type AgentOutcome, type AgentRun } from "../../src/agent/loop.js";
import {
  ModelError,
  type AssistantMessage,
  type ChatMessage,
  type ModelClient,
  type ModelReply,
} from "../../src/agent/model.js";
import { BUILD_SYSTEM_PROMPT, PLAN_SYSTEM_PROMPT } from "../../src/agent/prompts.js";
import { repairHistory } from "../../src/agent/history.js";
import type { ChatTool } from "../../src/tools/registry.js";
import type { AgentMode, ToolContext } from "../../src/tools/tool.js";
import type { CommandRunner } from "../../src/workspace/command-runner.js";

// ---- a scripted, in-process model ---------------------------------------------------------------

type ToolCall = NonNullable<AssistantMessage["tool_calls"]>[number];
type Turn = ModelReply | Error | ((request: ModelRequest) => ModelReply | Promise<ModelReply>);

interface ModelRequest {
  messages: ChatMessage[];
  /** The tool list exactly as sent, serialised. */
  tools: string;
}

/** Answers each request with the next turn of its script; the last turn repeats. Records every request. */
class ScriptedModel implements ModelClient {
  readonly model = "scripted";
  readonly requests: ModelRequest[] = [];
  constructor(private readonly script: Turn[]) {}

  async complete(messages: ChatMessage[], tools: ChatTool[]): Promise<ModelReply> {
    const request = { messages: structuredClone(messages), tools: JSON.stringify(tools) };
    this.requests.push(request);
    const turn = this.script[Math.min(this.requests.length, this.script.length) - 1];
    if (turn === undefined) throw new Error("empty script");
    if (turn instanceof Error) throw turn;
    return typeof turn === "function" ? turn(request) : turn;
  }
}

const usage = { prompt: 100, completion: 20, cached: 0 };
const call = (id: string, name: string, args: unknown): ToolCall => ({
  id,
  type: "function",
  function: { name, arguments: typeof args === "string" ? args : JSON.stringify(args) },
});
const calls = (...toolCalls: ToolCall[]): ModelReply => ({
  message: { role: "assistant", content: null, refusal: null, tool_calls: toolCalls },
  usage,
});
const text = (content: string | null): ModelReply => ({
  message: { role: "assistant", content, refusal: null },
  usage,
});

const PLAN = {
  title: "Add retry",
  summary: "Retry failed requests.",
  steps: [{ id: "S1", title: "Add the helper", details: "", files: ["README.md"], deps: [] }],
  risks: [],
  verification: ["npm test"],
};
const submit = (id = "submit") => calls(call(id, "submit_plan", PLAN));

// ---- a real workspace ---------------------------------------------------------------------------

let root: string;
const neverRun: CommandRunner = {
  isolation: "plain",
  run: () => Promise.reject(new Error("the loop tests never run commands")),
};

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "bp-loop-"));
  await fs.writeFile(path.join(root, "README.md"), "# Demo\nretry support\n");
  execFileSync("git", ["init", "-q"], { cwd: root });
  execFileSync("git", ["-c", "user.name=T", "-c", "user.email=t@example.com", "add", "-A"], { cwd: root });
  execFileSync("git", ["-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "init"], {
    cwd: root,
  });
});

afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const context = (mode: AgentMode = "plan"): ToolContext => ({
  root,
  mode,
  runner: neverRun,
  filesRead: new Set(),
  audit: [],
  allowWorkflowWrites: false,
  ...(mode === "build" ? { stepId: "S1" } : {}),
});

function run(model: ModelClient, overrides: Partial<AgentRun> = {}): Promise<AgentOutcome> {
  const mode = overrides.context?.mode ?? "plan";
  return runAgent({
    model,
    context: context(mode),
    messages: [
      { role: "system", content: mode === "plan" ? PLAN_SYSTEM_PROMPT : BUILD_SYSTEM_PROMPT },
      { role: "user", content: mode === "plan" ? "Plan: add retry support." : "Step S1: Add the helper" },
    ],
    ...overrides,
  });
}

const toolAnswer = (messages: ChatMessage[], id: string) =>
  messages.find(
    (message): message is Extract<ChatMessage, { role: "tool" }> =>
      message.role === "tool" && message.tool_call_id === id,
  );
const contentOf = (message: { content?: unknown } | undefined) =>
  typeof message?.content === "string" ? message.content : "";

/** Every tool call is answered right after its turn and every answer belongs to a call. */
function expectValidHistory(messages: ChatMessage[]): void {
  expect(repairHistory(messages)).toEqual(messages);
}

// ---- malformed model output -----------------------------------------------------------------------

describe("runAgent with malformed model output", () => {
  it("answers arguments that are not JSON with an Error: tool message for that call", async () => {
    const model = new ScriptedModel([calls(call("bad-json", "read_file", '{"path": "README.md"')), submit()]);
    const outcome = await run(model);
    expect(outcome.kind).toBe("plan_submitted");
    const answer = toolAnswer(model.requests[1]?.messages ?? [], "bad-json");
    expect(contentOf(answer)).toMatch(/^Error:.*not valid JSON/s);
  });

  it("answers an unknown tool, and a write tool in plan mode, with Error: tool messages", async () => {
    const model = new ScriptedModel([
      calls(call("unknown", "rm_rf", { path: "/" }), call("write", "write_file", { path: "x.txt", content: "x" })),
      submit(),
    ]);
    const outcome = await run(model);
    expect(outcome.kind).toBe("plan_submitted");
    const messages = model.requests[1]?.messages ?? [];
    expect(contentOf(toolAnswer(messages, "unknown"))).toMatch(/^Error:.*no tool named "rm_rf"/s);
    expect(contentOf(toolAnswer(messages, "write"))).toMatch(/^Error:.*plan mode/s);
    await expect(fs.access(path.join(root, "x.txt"))).rejects.toThrow();
  });

  it("nudges a reply without a tool call, and the run goes on", async () => {
    const model = new ScriptedModel([text("I think the plan is clear."), submit()]);
    const outcome = await run(model);
    expect(outcome.kind).toBe("plan_submitted");
    const last = model.requests[1]?.messages.at(-1);
    expect(last?.role).toBe("user");
    expect(contentOf(last)).toContain("submit_plan");
  });

  it("fails with no_tool_call after repeated replies without a tool call", async () => {
    const model = new ScriptedModel([text("Here is my plan in prose.")]);
    const outcome = await run(model);
    expect(outcome).toMatchObject({ kind: "failed", failure: "no_tool_call" });
    if (outcome.kind === "failed") expect(outcome.message).toContain("submit_plan");
    expect(model.requests.length).toBeGreaterThanOrEqual(2);
    expect(model.requests.length).toBeLessThanOrEqual(10);
    expect(outcome.iterations).toBe(model.requests.length);
  });

  it("handles empty content without tool calls, and never sends an assistant message with neither", async () => {
    const model = new ScriptedModel([
      text(null),
      text(""),
      { message: { role: "assistant", content: null, refusal: null, tool_calls: [] }, usage },
      submit(),
    ]);
    const outcome = await run(model);
    expect(outcome.kind).toBe("plan_submitted");
    for (const request of model.requests) {
      for (const message of request.messages.filter((entry) => entry.role === "assistant")) {
        // OpenAI requires content unless tool_calls are given; Mistral answers 400
        // "Assistant message must have either content or tool_calls".
        const hasCalls = message.role === "assistant" && (message.tool_calls?.length ?? 0) > 0;
        expect(typeof message.content === "string" || hasCalls, JSON.stringify(message)).toBe(true);
      }
    }
  });

  it("answers a 1 MB argument with a bounded Error: tool message", async () => {
    const huge = "x".repeat(1_000_000);
    const model = new ScriptedModel([
      calls(
        call("huge-path", "read_file", { path: huge }),
        call("huge-summary", "submit_plan", { ...PLAN, summary: huge }),
      ),
      submit(),
    ]);
    const outcome = await run(model);
    expect(outcome.kind).toBe("plan_submitted");
    const messages = model.requests[1]?.messages ?? [];
    for (const id of ["huge-path", "huge-summary"]) {
      const answer = contentOf(toolAnswer(messages, id));
      expect(answer).toMatch(/^Error:/);
      expect(answer.length).toBeLessThanOrEqual(61_000);
    }
  });

  it("does not send a 1 MB argument back to the model with every later request", async () => {
    const model = new ScriptedModel([
      calls(call("huge", "write_file", { path: "big.txt", content: "y".repeat(1_000_000) })),
      calls(call("list", "list_files", {})),
      submit(),
    ]);
    const outcome = await run(model);
    expect(outcome.kind).toBe("plan_submitted");
    const later = model.requests.slice(1).map((request) => JSON.stringify(request.messages).length);
    for (const size of later) expect(size).toBeLessThan(200_000);
  });

  it("keeps oversized arguments in the history as valid JSON with the long values elided, and says so in the tool result", async () => {
    const model = new ScriptedModel([
      calls(call("huge", "write_file", { path: "big.txt", content: "y".repeat(1_000_000) })),
      submit(),
    ]);
    const outcome = await run(model);
    expect(outcome.kind).toBe("plan_submitted");
    const messages = model.requests[1]?.messages ?? [];
    const stored = messages
      .flatMap((message) => (message.role === "assistant" ? (message.tool_calls ?? []) : []))
      .find((entry) => entry.id === "huge");
    const args = JSON.parse(stored?.type === "function" ? stored.function.arguments : "null") as {
      path?: unknown;
      content?: unknown;
    };
    expect(args.path).toBe("big.txt");
    expect(args.content).toMatch(/1000000 characters, not kept in the history/);
    expect(contentOf(toolAnswer(messages, "huge"))).toMatch(/^Error:[\s\S]*arguments of this call were too large/);
    expectValidHistory(messages);
  });

  it("keeps arguments sent as an object in the history as a JSON string", async () => {
    const objectArguments = {
      ...call("object-args", "read_file", {}),
      function: { name: "read_file", arguments: { path: "README.md" } as unknown as string },
    };
    const model = new ScriptedModel([calls(objectArguments), submit()]);
    await run(model);
    const stored = (model.requests[1]?.messages ?? []).flatMap((message) =>
      message.role === "assistant" ? (message.tool_calls ?? []) : [],
    );
    expect(stored[0]?.type === "function" ? stored[0].function.arguments : undefined).toBe('{"path":"README.md"}');
  });

  it("sends one nudge, not a pile of them, after repeated empty replies", async () => {
    const model = new ScriptedModel([text(null), text(null), submit()]);
    const outcome = await run(model);
    expect(outcome.kind).toBe("plan_submitted");
    const sent = model.requests[2]?.messages ?? [];
    expect(sent.map((message) => message.role)).toEqual(["system", "user", "user"]);
    expect(contentOf(sent[2])).toMatch(/^Your reply was empty\..*submit_plan/s);
  });

  it("answers arguments sent as an object instead of a JSON string, as some compatible servers do", async () => {
    const objectArguments = {
      ...call("object-args", "read_file", {}),
      function: { name: "read_file", arguments: { path: "README.md" } as unknown as string },
    };
    const model = new ScriptedModel([calls(objectArguments), submit()]);
    const outcome = await run(model);
    expect(outcome.kind).toBe("plan_submitted");
    expect(contentOf(toolAnswer(model.requests[1]?.messages ?? [], "object-args"))).toMatch(/^Error:/);
  });

  it("ends on submit_plan called first among several calls, and answers the others so the history stays valid", async () => {
    const ctx = context();
    const model = new ScriptedModel([
      calls(
        call("a", "submit_plan", PLAN),
        call("b", "read_file", { path: "README.md" }),
        call("c", "list_files", {}),
        call("d", "write_file", { path: "y", content: "" }),
      ),
    ]);
    const outcome = await run(model, { context: ctx });
    expect(outcome.kind).toBe("plan_submitted");
    if (outcome.kind === "plan_submitted") expect(outcome.plan.title).toBe(PLAN.title);
    expect(model.requests).toHaveLength(1);
    expect(
      outcome.messages.slice(-4).map((message) => (message.role === "tool" ? message.tool_call_id : message.role)),
    ).toEqual(["a", "b", "c", "d"]);
    for (const id of ["b", "c", "d"]) expect(contentOf(toolAnswer(outcome.messages, id))).toMatch(/^Error:/);
    expect(ctx.filesRead.size).toBe(0); // the calls after the ending were not run
    expectValidHistory(outcome.messages);
  });

  it("runs the calls before submit_plan in the same reply and answers the ones after it", async () => {
    const ctx = context();
    const model = new ScriptedModel([
      calls(
        call("a", "read_file", { path: "README.md" }),
        call("b", "submit_plan", PLAN),
        call("c", "read_file", { path: "README.md" }),
      ),
    ]);
    const outcome = await run(model, { context: ctx });
    expect(outcome.kind).toBe("plan_submitted");
    expect(contentOf(toolAnswer(outcome.messages, "a"))).toContain("retry support");
    expect(contentOf(toolAnswer(outcome.messages, "c"))).toMatch(/^Error:/);
    expectValidHistory(outcome.messages);
  });
});

// ---- failures of the model and limits ---------------------------------------------------------------

describe("runAgent when the model fails or a limit is hit", () => {
  it("fails with model and the ModelError's message", async () => {
    const model = new ScriptedModel([
      calls(call("a", "list_files", {})),
      new ModelError("the model endpoint at http://x did not answer in time"),
    ]);
    const outcome = await run(model);
    expect(outcome).toMatchObject({
      kind: "failed",
      failure: "model",
      message: "the model endpoint at http://x did not answer in time",
    });
    expect(outcome.iterations).toBe(1);
    expectValidHistory(outcome.messages);
  });

  it("fails with model, naming the cause, when the model throws something else", async () => {
    for (const thrown of [new TypeError("Cannot read properties of undefined (reading 'choices')"), "a bare string"]) {
      const model = new ScriptedModel([
        () => {
          throw thrown;
        },
      ]);
      const outcome = await run(model);
      expect(outcome).toMatchObject({ kind: "failed", failure: "model" });
      if (outcome.kind === "failed")
        expect(outcome.message).toContain(thrown instanceof Error ? "reading 'choices'" : "a bare string");
    }
  });

  it("fails with cancelled when the signal is aborted while the model answers", async () => {
    const controller = new AbortController();
    const model = new ScriptedModel([
      calls(call("a", "list_files", {})),
      () => {
        controller.abort();
        throw new DOMException("This operation was aborted", "AbortError");
      },
    ]);
    const outcome = await run(model, { signal: controller.signal });
    expect(outcome).toMatchObject({ kind: "failed", failure: "cancelled" });
    expect(model.requests).toHaveLength(2);
  });

  it("fails with cancelled, without asking the model again, when the signal is aborted between turns", async () => {
    const controller = new AbortController();
    const model = new ScriptedModel([
      calls(call("a", "list_files", {})),
      () => {
        controller.abort();
        return calls(call("b", "read_file", { path: "README.md" }));
      },
      submit(),
    ]);
    const outcome = await run(model, { signal: controller.signal });
    expect(outcome).toMatchObject({ kind: "failed", failure: "cancelled" });
    expect(model.requests).toHaveLength(2);
    expectValidHistory(outcome.messages);
  });

  it("fails with iterations at the iteration limit", async () => {
    const model = new ScriptedModel([(request) => calls(call(`c${request.messages.length}`, "list_files", {}))]);
    const outcome = await run(model, { limits: { maxIterations: 3 } });
    expect(outcome).toMatchObject({ kind: "failed", failure: "iterations", iterations: 3 });
    expect(model.requests).toHaveLength(3);
    expectValidHistory(outcome.messages);
  });

  it("fails with wall_time at the time limit", async () => {
    let clock = 0;
    const model = new ScriptedModel([
      (request) => {
        clock += 7 * 60_000;
        return calls(call(`c${request.messages.length}`, "list_files", {}));
      },
    ]);
    const outcome = await run(model, { now: () => clock, limits: { maxWallTimeMs: 20 * 60_000 } });
    expect(outcome).toMatchObject({ kind: "failed", failure: "wall_time" });
    if (outcome.kind === "failed") expect(outcome.message).toContain("20 minutes");
    expect(model.requests).toHaveLength(3);
  });

  it("fails with tokens once the reported usage passes the token limit", async () => {
    const model = new ScriptedModel([
      (request) => ({
        ...calls(call(`c${request.messages.length}`, "list_files", {})),
        usage: { prompt: 900_000, completion: 200_000, cached: 0 },
      }),
    ]);
    const outcome = await run(model, { limits: { maxTokens: 2_000_000 } });
    expect(outcome).toMatchObject({ kind: "failed", failure: "tokens" });
    expect(model.requests).toHaveLength(2);
    expect(outcome.usage).toEqual({ prompt: 1_800_000, completion: 400_000, cached: 0, requests: 2 });
  });
});

// ---- what the model is sent -------------------------------------------------------------------------

describe("runAgent requests", () => {
  const exploring = () =>
    new ScriptedModel([
      calls(call("a", "list_files", {})),
      calls(call("b", "read_file", { path: "README.md" })),
      text("hmm"),
      submit(),
    ]);

  it("sends a byte-identical tool list and system prompt on every request, and across runs in the same mode", async () => {
    const first = exploring();
    const second = exploring();
    await run(first);
    await run(second);
    const requests = [...first.requests, ...second.requests];
    expect(requests.length).toBeGreaterThanOrEqual(8);
    const tools = new Set(requests.map((request) => request.tools));
    expect(tools.size).toBe(1);
    const systems = new Set(requests.map((request) => JSON.stringify(request.messages[0])));
    expect(systems.size).toBe(1);
    expect(requests[0]?.messages[0]).toEqual({ role: "system", content: PLAN_SYSTEM_PROMPT });
  });

  it("offers no write or command tool in plan mode, and complete_step only in build mode", async () => {
    const planModel = new ScriptedModel([submit()]);
    await run(planModel);
    const buildModel = new ScriptedModel([
      calls(call("done", "complete_step", { step_id: "S1", summary: "Added the helper." })),
    ]);
    const outcome = await run(buildModel, { context: context("build") });
    expect(outcome).toMatchObject({ kind: "step_completed", stepId: "S1" });

    const names = (model: ScriptedModel) =>
      (JSON.parse(model.requests[0]?.tools ?? "[]") as Array<{ function: { name: string } }>).map(
        (tool) => tool.function.name,
      );
    expect(names(planModel)).toEqual(
      expect.arrayContaining(["read_file", "list_files", "search", "ask_user", "submit_plan"]),
    );
    for (const refused of ["write_file", "edit_file", "delete_file", "run_command", "complete_step"])
      expect(names(planModel)).not.toContain(refused);
    expect(names(buildModel)).toEqual(
      expect.arrayContaining(["write_file", "edit_file", "delete_file", "run_command", "complete_step"]),
    );
    expect(names(buildModel)).not.toContain("submit_plan");
  });
});
