import { describe, expect, it } from "vitest";
import { dispatchToolCall } from "../../src/tools/registry.js";
import type { ToolContext } from "../../src/tools/tool.js";
import type { CommandRunner } from "../../src/workspace/command-runner.js";

/**
 * complete_step's outcome (a fixed contract): "done" by default, null or absent alike; "blocked" ends the step undone.
 */

const neverRun: CommandRunner = {
  isolation: "plain",
  run: () => Promise.reject(new Error("complete_step runs no command")),
};
const context: ToolContext = {
  root: "/nonexistent",
  mode: "build",
  runner: neverRun,
  filesRead: new Set(),
  audit: [],
  stepId: "S2",
  allowWorkflowWrites: false,
};
const complete = (args: Record<string, unknown>) =>
  dispatchToolCall(
    "complete_step",
    JSON.stringify({ step_id: "S2", summary: "Wired the helper in.", ...args }),
    context,
  );

describe("complete_step", () => {
  it("completes the step when outcome is absent, null or done", async () => {
    for (const args of [{}, { outcome: null }, { outcome: "done" }]) {
      expect((await complete(args)).ending).toEqual({
        kind: "step_completed",
        stepId: "S2",
        summary: "Wired the helper in.",
      });
    }
  });

  it("reports the step blocked, with the summary as the reason", async () => {
    const result = await complete({ outcome: "blocked", summary: "The API the plan names does not exist." });
    expect(result.ending).toEqual({
      kind: "step_blocked",
      stepId: "S2",
      reason: "The API the plan names does not exist.",
    });
  });

  it("refuses an outcome it does not know, naming the argument", async () => {
    const result = await complete({ outcome: "partly" });
    expect(result.ending).toBeUndefined();
    expect(result.content).toMatch(/^Error: invalid arguments for complete_step:[\s\S]*outcome/);
  });
});
