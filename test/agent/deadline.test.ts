import path from "node:path";
import { afterEach, describe, expect, it, onTestFinished, vi } from "vitest";
import { runAgent, type AgentOutcome } from "../../src/agent/loop.js";
import { createModelClient } from "../../src/agent/model.js";
import { dispatchToolCall } from "../../src/tools/registry.js";
import type { ToolContext } from "../../src/tools/tool.js";
import { createCommandRunner, type CommandRunner } from "../../src/workspace/command-runner.js";
import { releaseFifo } from "../helpers/fifo.js";
import { tempDir } from "../helpers/git-repo.js";
import { startModelServer, type ModelServer, type Script } from "../helpers/model-server.js";
import { sleeper } from "../helpers/sleeper.js";

/** The run's wall-time limit is a deadline that model requests and commands are held to (docs/reliability.md). */

let server: ModelServer | null = null;
afterEach(async () => {
  vi.useRealTimers();
  await server?.close();
  server = null;
});

/**
 * The run's clock on vitest's fake clock: `Date` (the run's start, its deadline, what tools see of the time left) and
 * `setTimeout` (the deadline's timers, a command's kill, the grace after it) move only when a test advances them, once
 * what it waits for has happened. Nothing else is faked: sockets, streams and child processes run for real.
 */
const fakeClock = () => vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });

/** A limit of fake time: the deadline comes when a test moves the clock there, however slow the machine. */
const LIMIT_MS = 30_000;
/** How long the run waits for a tool told to stop before it abandons it (TOOL_GRACE_MS in the loop). */
const TOOL_GRACE_MS = 1000;

/** Resolves the first time `runner` is asked to run a command: it has then armed its timeout, capped at the deadline. */
function observed(runner: CommandRunner): { runner: CommandRunner; asked: Promise<void> } {
  let asked: () => void = () => {};
  const promise = new Promise<void>((resolve) => (asked = resolve));
  return {
    runner: {
      ...runner,
      run: (command, options) => {
        const result = runner.run(command, options);
        asked();
        return result;
      },
    },
    asked: promise,
  };
}

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

/**
 * Starts a build-mode run against a scripted model over HTTP, with the model's own timeout and retries far past the
 * limit; the outcome is awaited by the test, after it has moved the clock.
 */
async function startRun(
  script: Script,
  maxWallTimeMs: number,
  context = buildContext(),
): Promise<{ outcome: Promise<AgentOutcome> }> {
  server = await startModelServer(script);
  const model = createModelClient({
    baseURL: server.url,
    apiKey: "sk-test-0000000000000000",
    model: "m",
    timeoutMs: 300_000,
    maxRetries: 3,
  });
  const outcome = runAgent({
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
    fakeClock();
    let arrived: () => void = () => {};
    const requested = new Promise<void>((resolve) => (arrived = resolve));
    const { outcome } = await startRun(
      [
        () => {
          arrived();
          return { hang: true };
        },
      ],
      LIMIT_MS,
    );
    // The deadline comes once the request is with the model, however long it took to get there.
    await requested;
    await vi.advanceTimersByTimeAsync(LIMIT_MS);
    const ended = await outcome;
    expect(ended).toMatchObject({ kind: "failed", failure: "wall_time" });
    if (ended.kind === "failed")
      expect(ended.message).toBe("the run hit its time limit of 30 seconds while waiting for the model to answer");
    // The SDK's request was aborted, not left to its own 300 s timeout and retries.
    vi.useRealTimers();
    await expect.poll(() => server?.events).toEqual(["request 0", "closed 0"]);
  });

  it("caps run_command at the time left: a long command is killed at the deadline and the run ends there", async () => {
    fakeClock();
    const { runner, asked } = observed(createCommandRunner());
    const context = buildContext({ runner });
    // An hour long: it ends only by the kill, however long the test takes in real time.
    const command = sleeper();
    const { outcome } = await startRun(
      [{ toolCalls: [{ name: "run_command", arguments: { command, timeout_s: 600 } }] }],
      LIMIT_MS,
      context,
    );
    // The deadline comes once the command runs. The clock stops a moment past it, within the grace a killed
    // command has to report: the run waits for the kill, and ends at its limit with the command's report.
    await asked;
    await vi.advanceTimersByTimeAsync(LIMIT_MS + TOOL_GRACE_MS / 2);
    const ended = await outcome;
    expect(ended).toMatchObject({ kind: "failed", failure: "wall_time" });
    expect(context.audit).toEqual([
      { action: "command", target: command, exitCode: null, detail: "stopped at the run's time limit" },
    ]);
    expect(ended.messages.find((message) => message.role === "tool")?.content).toMatch(
      /^Error: the command failed \(stopped at the run's time limit after \d+ s and was killed\)/,
    );
  });

  it("holds every tool call to the deadline: a tool that never returns is abandoned there and the run ends", async () => {
    fakeClock();
    // A runner that ignores its timeout and signal stands for any tool that hangs (a read that blocks, say).
    const { runner, asked } = observed({ isolation: "plain", run: () => new Promise(() => {}) });
    const { outcome } = await startRun(
      [{ toolCalls: [{ name: "run_command", arguments: { command: "true", timeout_s: 600 } }] }],
      LIMIT_MS,
      buildContext({ runner }),
    );
    // The deadline, and the grace after it, come once the tool runs.
    await asked;
    await vi.advanceTimersByTimeAsync(LIMIT_MS + TOOL_GRACE_MS);
    expect(await outcome).toMatchObject({
      kind: "failed",
      failure: "wall_time",
      message: "the run hit its time limit of 30 seconds while run_command was running",
    });
  });

  it("a read_file on a named pipe the agent's command made neither hangs the run nor a thread of the App", async () => {
    const root = tempDir("bp-deadline-fifo-");
    const runner = createCommandRunner();
    expect((await runner.run("mkfifo notes.txt && echo made", { cwd: root })).output).toContain("made");
    onTestFinished(() => releaseFifo(path.join(root, "notes.txt")));
    const { outcome: running } = await startRun(
      [{ toolCalls: [{ name: "read_file", arguments: { path: "notes.txt", start_line: null, end_line: null } }] }],
      20_000,
      buildContext({ root, runner }),
    );
    const outcome = await running;
    // The read did not wait for a writer, nor for the deadline: the tool answered, and the run went on.
    expect(outcome.messages.find((message) => message.role === "tool")?.content).toMatch(
      /^Error: notes\.txt is not a regular file \(a named pipe\)/,
    );
  });

  it("a cancelled run stops waiting for a tool that never returns", async () => {
    fakeClock();
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
    const { runner, asked } = observed({ isolation: "plain", run: () => new Promise(() => {}) });
    const controller = new AbortController();
    const run = runAgent({
      model,
      context: buildContext({ runner }),
      messages: [{ role: "user", content: "Step S1: Wait" }],
      signal: controller.signal,
    });
    // Cancelled once the tool is running, however long the run took to get there; abandoned after the grace.
    await asked;
    controller.abort("cancelled by @maintainer");
    await vi.advanceTimersByTimeAsync(TOOL_GRACE_MS);
    await expect(run).resolves.toMatchObject({ kind: "failed", failure: "cancelled" });
  });

  it("run_command keeps its own timeout when the deadline is further away", async () => {
    fakeClock();
    const { runner, asked } = observed(createCommandRunner());
    const context = buildContext({ runner, deadline: Date.now() + LIMIT_MS });
    const result = dispatchToolCall("run_command", JSON.stringify({ command: sleeper(), timeout_s: 1 }), context);
    // The command's own second passes once it runs: it is killed then, long before the deadline.
    await asked;
    await vi.advanceTimersByTimeAsync(1000);
    expect((await result).content).toMatch(/^Error: the command failed \(timed out after 1 s and was killed\)/);
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
