import { describe, expect, it } from "vitest";
import { compare, figureValue, orderOf, pairRows, spread } from "../../bench/support/pairs.mjs";

// Same-run pairs (BENCH_BASELINE): the arithmetic behind the benches' baseline-against-current tables.
describe("same-run pairs", () => {
  it("flips the builds' order every round", () => {
    expect([0, 1, 2, 3].map(orderOf)).toEqual([
      ["baseline", "current"],
      ["current", "baseline"],
      ["baseline", "current"],
      ["current", "baseline"],
    ]);
  });

  it("measures a build's spread as its runs' range over their median", () => {
    expect(spread([90, 110])).toBeCloseTo(0.2);
    expect(spread([100, 120, 200])).toBeCloseTo(100 / 120);
    expect(spread([5, 5])).toBe(0);
    expect(spread([0, 2])).toBe(2);
    expect(spread([0, 0, 3])).toBe(Infinity);
    expect(spread([42])).toBeNaN();
  });

  it("calls a difference beyond spread only when the ratio is further from 1 than the larger spread", () => {
    // Baseline 100 ± 10 %, current 115 ± 4 %: 1.15 is beyond 10 %.
    expect(compare([95, 105], [113, 117])).toMatchObject({ before: 100, after: 115, call: "WORSE, beyond spread" });
    expect(compare([95, 105], [113, 117]).ratio).toBeCloseTo(1.15);
    // The same current against a noisier baseline (± 20 %): within.
    expect(compare([90, 110], [113, 117]).call).toBe("within spread");
    expect(compare([100, 102], [70, 72]).call).toBe("better, beyond spread");
    expect(compare([0, 0], [0, 0])).toMatchObject({ ratio: 1, call: "same" });
    // A duplicate where the baseline had none.
    expect(compare([0, 0], [0, 1])).toMatchObject({ ratio: Infinity, call: "WORSE, beyond spread" });
    expect(compare([100], [150]).call).toBe("no spread (one run)");
  });

  it("prints both builds' runs, the ratio on the medians and both spreads", () => {
    const [row] = pairRows([{ name: "webhook response p99", unit: "ms", before: [95, 105], after: [113, 117] }]);
    expect(row).toEqual([
      "webhook response p99",
      "95.0 / 105 ms",
      "113 / 117 ms",
      "1.15×",
      "10 % / 3 %",
      "WORSE, beyond spread",
    ]);
    const [more] = pairRows([{ name: "duplicates", unit: "", before: [0, 0, 0], after: [0, 1, 0] }]);
    expect(more?.slice(1, 5)).toEqual(["0 (0 / 0 / 0)", "0 (0 / 1 / 0)", "1.00×", "0 % / ∞"]);
  });

  it("reads the load report's figures: ms, seconds and counts, nothing else", () => {
    expect(figureValue("123 ms")).toEqual({ value: 123, unit: "ms" });
    expect(figureValue("151.7 s")).toEqual({ value: 151.7, unit: "s" });
    expect(figureValue("0")).toEqual({ value: 0, unit: "" });
    expect(figureValue("n/a")).toBeUndefined();
    expect(figureValue("1000 / 1000 (200: 1000)")).toBeUndefined();
    expect(figureValue("810 model runs, 810 plan comments")).toBeUndefined();
  });
});
