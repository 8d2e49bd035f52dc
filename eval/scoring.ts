import type { PhaseUsage } from "./metering-proxy.js";

export interface FileOverlap {
  /** Share of the real change's files the plan names (0 without a plan). */
  recall: number | null;
  /** Share of the plan's files (tests left out) that the real change touched; null when it names none. */
  precision: number | null;
}

/** Tests the plan adds are good practice, not a wrong guess: the hidden check brings its own. */
const TEST_FILE = /(^|\/)(test|tests|__tests__|spec)\/|\.(test|spec)\.[cm]?[jt]sx?$/;

export function normalisePath(file: string): string {
  return file.trim().replace(/^\.\//, "").replace(/\/+$/, "");
}

export function fileOverlap(planFiles: string[], realFiles: string[]): FileOverlap {
  const named = new Set(planFiles.map(normalisePath));
  const real = new Set(realFiles.map(normalisePath));
  const hits = [...real].filter((file) => named.has(file)).length;
  const judged = [...named].filter((file) => real.has(file) || !TEST_FILE.test(file));
  return {
    recall: real.size === 0 ? null : hits / real.size,
    precision: judged.length === 0 ? null : hits / judged.length,
  };
}

export interface Prices {
  /** Dollars per million prompt tokens that were not cached. */
  input: number;
  /** Dollars per million cached prompt tokens (defaults to `input`). */
  cached?: number | undefined;
  /** Dollars per million completion tokens. */
  output: number;
}

export function costOf(usage: PhaseUsage, prices: Prices | null): number | null {
  if (!prices) return null;
  const uncached = Math.max(0, usage.prompt - usage.cached);
  return (
    (uncached * prices.input + usage.cached * (prices.cached ?? prices.input) + usage.completion * prices.output) /
    1_000_000
  );
}

export function addUsage(...parts: PhaseUsage[]): PhaseUsage {
  const total: PhaseUsage = { requests: 0, errors: 0, prompt: 0, cached: 0, completion: 0 };
  for (const part of parts) {
    total.requests += part.requests;
    total.errors += part.errors;
    total.prompt += part.prompt;
    total.cached += part.cached;
    total.completion += part.completion;
  }
  return total;
}

export interface Spread {
  n: number;
  min: number;
  median: number;
  max: number;
  mean: number;
  /** Sample standard deviation (0 for a single value). */
  sd: number;
}

/** The spread of the values that exist; null when none does. */
export function spreadOf(values: Array<number | null>): Spread | null {
  const present = values.filter((value): value is number => value !== null).sort((a, b) => a - b);
  const n = present.length;
  if (n === 0) return null;
  const mean = present.reduce((sum, value) => sum + value, 0) / n;
  const middle = Math.floor(n / 2);
  const median = n % 2 === 1 ? (present[middle] ?? 0) : ((present[middle - 1] ?? 0) + (present[middle] ?? 0)) / 2;
  const sd = n < 2 ? 0 : Math.sqrt(present.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (n - 1));
  return { n, min: present[0] ?? 0, median, max: present[n - 1] ?? 0, mean, sd };
}

/**
 * The unbiased pass@k estimator of the Codex paper (Chen et al., 2021), for n runs of which c passed:
 * 1 − C(n−c, k) / C(n, k), computed as a product so large n does not overflow.
 */
export function passAtK(n: number, c: number, k: number): number {
  if (k < 1 || k > n) throw new Error(`pass@${k} needs 1 ≤ k ≤ n (n = ${n})`);
  if (n - c < k) return 1;
  let allFail = 1;
  for (let i = n - c + 1; i <= n; i += 1) allFail *= 1 - k / i;
  return 1 - allFail;
}
