import path from "node:path";
import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import { runAgent, type AgentOutcome } from "../../src/agent/loop.js";
import { createModelClient } from "../../src/agent/model.js";
import { dispatchToolCall } from "../../src/tools/registry.js";
import type { ToolContext } from "../../src/tools/tool.js";
import { createCommandRunner, type CommandRunner } from "../../src/workspace/command-runner.js";
import { releaseFifo } from "../helpers/fifo.js";
import { tempDir } from "../helpers/git-repo.js";
import { startModelServer, type ModelServer, type Script } from "../helpers/model-server.js";

/** The run's wall-time limit is a deadline that model requests and commands are held to (docs/reliability.md). */

let server: ModelServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const buildContext = (overrides: Partial<ToolContext> = {}): ToolContext => ({
  root: tempDir("bp-deadline-"),
  mode: "build",
  runner: createCommandRunner(),
  filesRead: new Set(),
  audit: [],
  stepId: "S1",
  allowWorkflowWrites: false,
  ...overrides,
});

/** A build-mode run against a scripted model over HTTP, with the model's own timeout and retries far past the limit. */
async function runWithLimit(
  script: Script,
  maxWallTimeMs: number,
  context = buildContext(),
): Promise<{ outcome: AgentOutcome }> {
  server = await startModelServer(script);
  const model = createModelClient({
    baseURL: server.url,
    apiKey: "sk-test-0000000000000000",
    model: "m",
    timeoutMs: 300_000,
    maxRetries: 3,
  });
  const outcome = await runAgent({
    model,
    context,
    messages: [
      { role: "system", content: "build" },
      { role: "user", content: "Step S1: Wait" },
    ],
    limits: { maxWallTimeMs },
  });
  return { outcome };
}

describe("the run's deadline", () => {
  it("ends a run whose model call hangs at the deadline, with a time-limit failure, and closes the request", async () => {
    const { outcome } = await runWithLimit([{ hang: true }], 2000);
    expect(outcome).toMatchObject({ kind: "failed", failure: "wall_time" });
    if (outcome.kind === "failed")
      expect(outcome.message).toBe("the run hit its time limit of 2 seconds while waiting for the model to answer");
    // The SDK's request was aborted, not left to its own 300 s timeout and retries.
    await expect.poll(() => server?.events).toEqual(["request 0", "closed 0"]);
  });

  it("caps run_command at the time left: a long command is killed at the deadline and the run ends there", async () => {
    const context = buildContext();
    const { outcome } = await runWithLimit(
      [{ toolCalls: [{ name: "run_command", arguments: { command: "sleep 30", timeout_s: 600 } }] }],
      2000,
      context,
    );
    expect(outcome).toMatchObject({ kind: "failed", failure: "wall_time" });
    expect(context.audit).toEqual([
      { action: "command", target: "sleep 30", exitCode: null, detail: "stopped at the run's time limit" },
    ]);
  });

  it("holds every tool call to the deadline: a tool that never returns is abandoned there and the run ends", async () => {
    // A runner that ignores its timeout and signal stands for any tool that hangs (a read that blocks, say).
    const hanging: CommandRunner = { isolation: "plain", run: () => new Promise(() => {}) };
    const { outcome } = await runWithLimit(
      [{ toolCalls: [{ name: "run_command", arguments: { command: "true", timeout_s: 600 } }] }],
      1500,
      buildContext({ runner: hanging }),
    );
    expect(outcome).toMatchObject({
      kind: "failed",
      failure: "wall_time",
      message: "the run hit its time limit of 2 seconds while run_command was running",
    });
  });

  it("a read_file on a named pipe the agent's command made neither hangs the run nor a thread of the App", async () => {
    const root = tempDir("bp-deadline-fifo-");
    const runner = createCommandRunner();
    expect((await runner.run("mkfifo notes.txt && echo made", { cwd: root })).output).toContain("made");
    onTestFinished(() => releaseFifo(path.join(root, "notes.txt")));
    const { outcome } = await runWithLimit(
      [{ toolCalls: [{ name: "read_file", arguments: { path: "notes.txt", start_line: null, end_line: null } }] }],
      20_000,
      buildContext({ root, runner }),
    );
    // The read did not wait for a writer, nor for the deadline: the tool answered, and the run went on.
    expect(outcome.messages.find((message) => message.role === "tool")?.content).toMatch(
      /^Error: notes\.txt is not a regular file \(a named pipe\)/,
    );
  });

  it("a cancelled run stops waiting for a tool that never returns", async () => {
    server = await startModelServer([
      { toolCalls: [{ name: "run_command", arguments: { command: "true", timeout_s: 600 } }] },
    ]);
    const model = createModelClient({
      baseURL: server.url,
      apiKey: "sk-test-0000000000000000",
      model: "m",
      timeoutMs: 300_000,
      maxRetries: 0,
    });
    let started: () => void = () => {};
    const running = new Promise<void>((resolve) => (started = resolve));
    const hanging: CommandRunner = {
      isolation: "plain",
      run: () => {
        started();
        return new Promise(() => {});
      },
    };
    const controller = new AbortController();
    const run = runAgent({
      model,
      context: buildContext({ runner: hanging }),
      messages: [{ role: "user", content: "Step S1: Wait" }],
      signal: controller.signal,
    });
    // Cancelled once the tool is running, however long the run took to get there.
    await running;
    controller.abort("cancelled by @maintainer");
    await expect(run).resolves.toMatchObject({ kind: "failed", failure: "cancelled" });
  });

  it("run_command keeps its own timeout when the deadline is further away", async () => {
    const context = buildContext({ deadline: Date.now() + 60_000 });
    const result = await dispatchToolCall(
      "run_command",
      JSON.stringify({ command: "sleep 30", timeout_s: 1 }),
      context,
    );
    expect(result.content).toMatch(/^Error: the command failed \(timed out after 1 s and was killed\)/);
  });

  it("run_command starts nothing once the deadline has passed", async () => {
    const dir = tempDir("bp-deadline-");
    const context = buildContext({ root: dir, deadline: Date.now() - 1 });
    const result = await dispatchToolCall("run_command", JSON.stringify({ command: "touch ran.txt" }), context);
    expect(result.content).toMatch(/^Error: the command was not run: the run's time limit is reached/);
    const again = await dispatchToolCall("list_files", "{}", context);
    expect(again.content).not.toContain("ran.txt");
    expect(context.audit).toEqual([
      {
        action: "command",
        target: "touch ran.txt",
        exitCode: null,
        detail: "not run: the run's time limit was reached",
      },
    ]);
  });
});
