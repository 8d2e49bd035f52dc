import { describe, expect, it } from "vitest";
import { costOf, formatDollars, priceFor } from "../../src/agent/cost.js";
import { estimateBuild } from "../../src/plan/estimate.js";

describe("pricing model tokens", () => {
  it("prices uncached prompt, cached prompt and completion tokens per million; cached input costs as input when unpriced", () => {
    const usage = { prompt: 10_000, cached: 4_000, completion: 1_000 };
    expect(costOf(usage, { input: 2, cached_input: 0.5, output: 8 })).toBeCloseTo(
      (6_000 * 2 + 4_000 * 0.5 + 1_000 * 8) / 1e6,
      12,
    );
    expect(costOf(usage, { input: 2, output: 8 })).toBeCloseTo((10_000 * 2 + 1_000 * 8) / 1e6, 12);
  });

  it("takes the App's price over the repository's, so a repository cannot make its builds look cheaper", () => {
    const app = { "gpt-4.1": { input: 2, output: 8 } };
    const repo = { "gpt-4.1": { input: 0, output: 0 }, "local-model": { input: 0.1, output: 0.2 } };
    expect(priceFor("gpt-4.1", app, repo)).toEqual({ input: 2, output: 8 });
    expect(priceFor("local-model", app, repo)).toEqual({ input: 0.1, output: 0.2 });
    expect(priceFor("gpt-4.1-mini", app, repo)).toBeNull();
  });

  it("shows small amounts with enough digits to tell them apart", () => {
    expect([0, 0.00001, 0.0042, 0.575001, 12.5, 1234.4].map(formatDollars)).toEqual([
      "$0",
      "<$0.0001",
      "$0.0042",
      "$0.58",
      "$12.50",
      "$1,234",
    ]);
  });

  it("estimates a build from each step's complexity and files, an unrated step counting as medium", () => {
    const step = (id: string, complexity: "low" | "medium" | "high" | undefined, files: string[]) => ({
      id,
      title: id,
      details: "",
      files,
      deps: [],
      risk: undefined,
      complexity,
    });
    const estimate = estimateBuild([
      step("S1", "low", []),
      step("S2", undefined, ["a", "b"]),
      step("S3", "high", ["c"]),
    ]);
    expect(estimate.steps).toEqual([
      { id: "S1", tokens: 60_000 },
      { id: "S2", tokens: 190_000 },
      { id: "S3", tokens: 420_000 },
    ]);
    expect(estimate.prompt + estimate.completion).toBe(670_000);
    expect(estimate.completion).toBe(33_500);
  });
});
