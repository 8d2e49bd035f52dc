import { describe, expect, it } from "vitest";
import { main } from "../../eval/main.js";
import { buildReply, call, done, plan, planReply, PLAN_USAGE, step } from "./script.js";
import { useSmokeFixture } from "./smoke-fixture.js";
import { useEvalRun } from "./support.js";

describe("npm run eval's rounds with no human: feedback, questions, an endpoint that is down", () => {
  const { startModel, outDir } = useEvalRun();
  const smoke = useSmokeFixture();

  it("adds one scripted revise round with --feedback, and answers the agent's questions for the absent human", async () => {
    const model = await startModel([
      { ...call("ask_user", { question: "Should `%` at the end become `%25`?" }), usage: PLAN_USAGE },
      planReply(plan([step("S1", ["README.md"])])),
      planReply(plan([step("S1", ["index.js"])])),
      buildReply("ask_user", { question: "May I change the regular expression?" }),
      buildReply("edit_file", { path: "index.js", ...smoke().realEdit("tiny-encodeurl-1.0.1", "index.js") }),
      done("S1"),
    ]);
    const out = outDir();
    const argv = [
      "--suite",
      "smoke",
      ...smoke().args,
      "--base-url",
      model.url,
      "--tasks",
      "tiny-encodeurl-1.0.1",
      "--feedback",
      "change index.js, not the README",
      "--out",
      out,
    ];
    const { report } = await main(
      argv,
      { BLUEPRINT_MODEL_RETRIES: "0" },
      { stdout: () => {}, stderr: () => {} },
      { smokeDir: smoke().smokeDir },
    );

    const run = report?.runs[0];
    expect(run?.plan).toMatchObject({ valid: true, revision: 2, files: ["index.js"], recall: 1, precision: 1 });
    expect(run?.check.passed).toBe(true);
    expect(run?.questions).toEqual({ plan: 1, build: 1 });
    expect(run?.exitCodes).toEqual({ plan: 0, revise: 0, build: 0 });
    expect(run?.usage.plan).toEqual({ requests: 2, errors: 0, prompt: 2_000, cached: 800, completion: 200 });
    expect(run?.usage.revise).toEqual({ requests: 1, errors: 0, prompt: 1_000, cached: 400, completion: 100 });
    expect(run?.usage.build).toEqual({ requests: 3, errors: 0, prompt: 6_000, cached: 4_500, completion: 900 });
    expect(run?.cost).toBeNull();
    expect(model.requests).toHaveLength(6);
    // Each question got the scripted answer; the revision was asked for with the scripted feedback.
    expect(JSON.stringify(model.requests[1]?.messages)).toContain("No one can answer questions during this evaluation");
    expect(JSON.stringify(model.requests[4]?.messages)).toContain("No one can answer questions during this evaluation");
    expect(JSON.stringify(model.requests[2]?.messages)).toContain("change index.js, not the README");
    expect(JSON.stringify(model.requests[1]?.messages)).not.toContain("change index.js, not the README");
    // Six CLI runs in child processes: well over the default limit on a busy machine.
  });

  it("says so, and exits 1, when the endpoint answers no request at all", async () => {
    const model = await startModel([{ status: 503 }]);
    const out = outDir();
    const stderr: string[] = [];
    const { exitCode, report } = await main(
      ["--suite", "smoke", ...smoke().args, "--base-url", model.url, "--tasks", "tiny-ms-1.0.1", "--out", out],
      { BLUEPRINT_MODEL_RETRIES: "0" },
      { stdout: () => {}, stderr: (text) => stderr.push(text) },
      { smokeDir: smoke().smokeDir },
    );

    expect(exitCode).toBe(1);
    expect(report?.runs[0]).toMatchObject({
      plan: { valid: false, recall: 0, precision: null },
      build: { ran: false },
      check: { ran: false, passed: false },
      exitCodes: { plan: 1, build: null },
    });
    expect(report?.overall.totals).toMatchObject({ requests: 0, errors: 1 });
    expect(stderr.join("\n")).toContain(`the model endpoint ${model.url} answered none of 1 requests`);
  });

  it("counts a build step the endpoint fails as failed, not blocked, and the failed request apart", async () => {
    const model = await startModel([planReply(plan([step("S1", ["index.js"])])), { status: 500 }]);
    const { exitCode, report } = await main(
      ["--suite", "smoke", ...smoke().args, "--base-url", model.url, "--tasks", "tiny-ms-1.0.1", "--out", outDir()],
      { BLUEPRINT_MODEL_RETRIES: "0" },
      { stdout: () => {}, stderr: () => {} },
      { smokeDir: smoke().smokeDir },
    );

    // No run passed: exit 1 (without --fail-under, a run where nothing passes fails).
    expect(exitCode).toBe(1);
    expect(report?.runs[0]).toMatchObject({
      plan: { valid: true, recall: 1, precision: 1 },
      build: { ran: true, status: "failed", stepsDone: 0, stepsBlocked: 0, stepsFailed: 1 },
      check: { ran: false, passed: false },
      usage: { plan: { requests: 1, errors: 0 }, build: { requests: 0, errors: 1 } },
    });
  });
});
