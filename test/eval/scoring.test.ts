import { describe, expect, it } from "vitest";
import { EvalUsageError, parseEvalArgs } from "../../eval/args.js";
import { figure } from "../../eval/report.js";
import { harnessFailure, type TaskRun } from "../../eval/run-task.js";
import { summarise } from "../../eval/runner.js";
import { costOf, fileOverlap, spreadOf } from "../../eval/scoring.js";
import { loadTasks } from "../../eval/task-suite.js";

describe("eval scoring", () => {
  it("measures the plan's files against the real change's, leaving the plan's own tests out of precision", () => {
    expect(fileOverlap(["./index.js", "README.md"], ["index.js"])).toEqual({ recall: 1, precision: 0.5 });
    expect(fileOverlap(["index.js", "test/index.js", "lib/x.spec.ts"], ["index.js", "index.d.ts"])).toEqual({
      recall: 0.5,
      precision: 1,
    });
    // A test file the real change touched counts like any other.
    expect(fileOverlap(["test/a.js"], ["test/a.js"])).toEqual({ recall: 1, precision: 1 });
    expect(fileOverlap([], ["index.js"])).toEqual({ recall: 0, precision: null });
  });

  it("prices uncached, cached and completion tokens per million", () => {
    const usage = { requests: 3, errors: 0, prompt: 10_000, cached: 4_000, completion: 1_000 };
    expect(costOf(usage, null)).toBeNull();
    expect(costOf(usage, { input: 2, output: 8 })).toBeCloseTo((10_000 * 2 + 1_000 * 8) / 1e6, 12);
    expect(costOf(usage, { input: 2, cached: 0.5, output: 8 })).toBeCloseTo(
      (6_000 * 2 + 4_000 * 0.5 + 1_000 * 8) / 1e6,
      12,
    );
  });

  it("reports the spread of several runs: min, median, max, mean and sample sd", () => {
    expect(spreadOf([3, null, 1, 2, 10])).toEqual({
      n: 4,
      min: 1,
      median: 2.5,
      max: 10,
      mean: 4,
      sd: Math.sqrt(((1 - 4) ** 2 + (2 - 4) ** 2 + (3 - 4) ** 2 + (10 - 4) ** 2) / 3),
    });
    expect(spreadOf([null])).toBeNull();
    expect(figure(spreadOf([7]), 0)).toBe("7");
    expect(figure(spreadOf([1, 2, 9]), 1)).toBe("2.0 (1.0–9.0)");
    expect(figure(null, 2)).toBe("–");
  });

  it("adds runs up per task: counts, spreads and totals, and no cost when a run has none", () => {
    const run = (n: number, passed: boolean, requests: number, cost: number | null): TaskRun => {
      const base = harnessFailure({ id: "encodeurl-1.0.2", kind: "smoke" }, n, "unused");
      const usage = { requests, errors: 0, prompt: requests * 100, cached: 0, completion: requests * 10 };
      return {
        ...base,
        error: null,
        plan: { ...base.plan, valid: true, recall: passed ? 1 : 0.5, precision: 1 },
        build: {
          ran: true,
          status: passed ? "built" : "failed",
          stepsDone: passed ? 2 : 1,
          stepsBlocked: passed ? 0 : 1,
          stepsFailed: 0,
          files: ["index.js"],
          outsidePlan: [],
          inPlan: true,
        },
        check: { ran: true, passed, exitCode: passed ? 0 : 1, output: "", isolation: "plain" },
        usage: { plan: usage, revise: usage, build: usage, total: usage },
        cost,
        seconds: { setup: 0.2, plan: 1, revise: 0, build: 2, check: 0.1, total: 3.1 },
      };
    };
    const summary = summarise([run(1, true, 4, 0.01), run(2, false, 6, 0.03), run(3, true, 5, 0.02)]);
    expect(summary).toMatchObject({
      runs: 3,
      planValid: 3,
      checkPassed: 2,
      totals: { requests: 15, promptTokens: 1_500, completionTokens: 150 },
    });
    expect(summary.totals.cost).toBeCloseTo(0.06, 12);
    expect(summary.requests).toMatchObject({ min: 4, median: 5, max: 6, mean: 5, sd: 1 });
    expect(summary.recall).toMatchObject({ min: 0.5, median: 1, max: 1 });
    expect(summary.stepsBlocked).toMatchObject({ min: 0, max: 1 });
    expect(summarise([run(1, true, 4, 0.01), run(2, true, 4, null)]).totals.cost).toBeNull();
  });
});

describe("npm run eval arguments", () => {
  it("reads the endpoint, model, tasks, runs, prices and feedback from flags, then the environment", () => {
    const args = parseEvalArgs(
      [
        "--tasks",
        "a, b,",
        "--runs",
        "3",
        "--concurrency",
        "2",
        "--feedback",
        " keep it small ",
        "--price-in",
        "2.5",
        "--price-out",
        "10",
      ],
      { OPENAI_BASE_URL: "http://localhost:11434/v1", BLUEPRINT_MODEL: "qwen" },
      "/out",
    );
    expect(args).toMatchObject({
      baseUrl: "http://localhost:11434/v1",
      model: "qwen",
      tasks: ["a", "b"],
      runs: 3,
      concurrency: 2,
      feedback: "keep it small",
      prices: { input: 2.5, output: 10 },
      outDir: "/out",
    });
    expect(parseEvalArgs([], {}, "/out")).toMatchObject({
      baseUrl: "https://api.openai.com/v1",
      tasks: undefined,
      runs: 1,
      prices: null,
      feedback: undefined,
    });
    expect(parseEvalArgs([], { BLUEPRINT_EVAL_PRICE_IN: "1", BLUEPRINT_EVAL_PRICE_OUT: "4" }, "/out").prices).toEqual({
      input: 1,
      output: 4,
      cached: undefined,
    });
    // Where the smoke suite's packages come from and are kept: flags, then npm's and the eval's variables, else npm's
    // own registry.
    expect(
      parseEvalArgs(
        ["--registry", "http://127.0.0.1:4873/", "--cache", "/c"],
        { npm_config_registry: "http://mirror/" },
        "/out",
      ),
    ).toMatchObject({ registry: "http://127.0.0.1:4873/", cacheDir: "/c" });
    expect(
      parseEvalArgs([], { npm_config_registry: "http://mirror/", BLUEPRINT_EVAL_CACHE: "/cache" }, "/out"),
    ).toMatchObject({ registry: "http://mirror/", cacheDir: "/cache" });
    expect(parseEvalArgs([], {}, "/out")).toMatchObject({ registry: undefined, cacheDir: undefined });
  });

  it("refuses what it cannot use, with a message that says what to type", () => {
    expect(() => parseEvalArgs(["--runs", "0"], {}, "/out")).toThrow(/--runs needs a whole number/);
    expect(() => parseEvalArgs(["--price-in", "2"], {}, "/out")).toThrow(/both --price-in and --price-out/);
    expect(() => parseEvalArgs(["--price-in", "two", "--price-out", "1"], {}, "/out")).toThrow(EvalUsageError);
    expect(() => parseEvalArgs(["--frobnicate"], {}, "/out")).toThrow(EvalUsageError);
    expect(() => loadTasks(undefined, ["no-such-task"])).toThrow(/unknown task: no-such-task/);
  });
});
