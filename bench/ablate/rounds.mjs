// Same-run pairs: each variant measured in turn, round after round, the order flipped every round so
// neither always runs on a warmer (or busier) machine; the verdict is on medians.
import os from "node:os";

/** Rounds per pair (BENCH_ABLATE_ROUNDS, default 5). */
export const ROUNDS = Math.max(1, Number(process.env.BENCH_ABLATE_ROUNDS) || 5);

/** Ours must beat the library by this share of its own figure to be kept (issue #37). */
export const KEEP_MARGIN = 0.25;

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/**
 * Runs `measure(variant)` for every variant, `ROUNDS` times, interleaved. `measure` resolves with
 * one number (lower is better). Returns each variant's figures and median.
 */
export async function interleaved(variants, measure) {
  const figures = Object.fromEntries(variants.map((variant) => [variant, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? variants : [...variants].reverse();
    for (const variant of order) figures[variant].push(await measure(variant, round));
  }
  return Object.fromEntries(
    variants.map((variant) => [variant, { figures: figures[variant], median: median(figures[variant]) }]),
  );
}

/** One pair's line: both medians, the library's over ours, and whether ours pays (≥ 1 + KEEP_MARGIN). */
export function verdict(name, unit, ours, library, calls = ["KEEP OURS", "USE THE LIBRARY"]) {
  const ratio = library.median / ours.median;
  return {
    name,
    unit,
    ours: ours.median,
    library: library.median,
    ratio,
    keep: ratio >= 1 + KEEP_MARGIN,
    call: name.startsWith("  ") ? "(part)" : calls[ratio >= 1 + KEEP_MARGIN ? 0 : 1],
    spread: { ours: ours.figures, library: library.figures },
  };
}

export function loadAverage() {
  return os
    .loadavg()
    .map((value) => value.toFixed(2))
    .join(" / ");
}

export function fixed(value) {
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
}

/** A pair's rounds, one line per variant. */
export function printRounds(label, unit, results) {
  console.log(`  ${label} (${unit}, per round; median last):`);
  for (const [variant, { figures, median: m }] of Object.entries(results))
    console.log(`    ${variant.padEnd(34)} ${figures.map(fixed).join("  ")}   median ${fixed(m)}`);
}
