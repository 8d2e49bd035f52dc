// Same-run pairs (BENCH_BASELINE, see baseline.mjs): a figure measured for the baseline build and for this one in
// the same run, in alternating rounds, and whether the difference between them is beyond the bench's own spread.
// Every figure here is one where lower is better (a time, CPU, a count of what must not happen).
import { fixed, median } from "../ablate/rounds.mjs";

/** The builds' order in round `round` (from 0): flipped every round, so neither always runs first. */
export function orderOf(round) {
  return round % 2 === 0 ? ["baseline", "current"] : ["current", "baseline"];
}

/**
 * How far apart one build's runs of a figure are: (largest − smallest) ÷ median; with two runs, how much they differ
 * over their mean. 0 when all are equal, Infinity when they differ around a median of 0, NaN with fewer than two runs
 * (no spread to tell noise by).
 */
export function spread(values) {
  if (values.length < 2) return NaN;
  const low = Math.min(...values);
  const high = Math.max(...values);
  if (high === low) return 0;
  const middle = median(values);
  return middle === 0 ? Infinity : (high - low) / middle;
}

/**
 * One figure compared: each build's median, after ÷ before (current over baseline), each build's spread, and the
 * call: "same" (equal medians), "within spread" when |ratio − 1| is at most the larger spread, else "WORSE, beyond
 * spread" or "better, beyond spread"; "no spread (one run)" when a build has a single run.
 */
export function compare(before, after) {
  const b = median(before);
  const a = median(after);
  const ratio = a === b ? 1 : b === 0 ? Infinity : a / b;
  const noise = Math.max(spread(before), spread(after));
  return {
    before: b,
    after: a,
    ratio,
    spreadBefore: spread(before),
    spreadAfter: spread(after),
    call: callOf(b, a, noise),
  };
}

function callOf(before, after, noise) {
  if (after === before) return "same";
  if (Number.isNaN(noise)) return "no spread (one run)";
  const ratio = before === 0 ? Infinity : after / before;
  if (Math.abs(ratio - 1) <= noise) return "within spread";
  return after > before ? "WORSE, beyond spread" : "better, beyond spread";
}

/** Header of pairRows' table. */
export const PAIR_HEADER = [
  "figure",
  "baseline (runs)",
  "current (runs)",
  "after ÷ before",
  "spread (baseline / current)",
  "",
];

/**
 * The table's rows, one per figure: both builds' runs (median first when there are more than two), after ÷ before on
 * the medians, each build's spread, and the call. `unit` is printed after the values ("ms", "s", or "" for a count).
 */
export function pairRows(figures) {
  return figures.map(({ name, unit, before, after }) => {
    const c = compare(before, after);
    const ratio = Number.isFinite(c.ratio) ? `${c.ratio.toFixed(2)}×` : "∞";
    return [
      name,
      runs(before, unit),
      runs(after, unit),
      ratio,
      `${percent(c.spreadBefore)} / ${percent(c.spreadAfter)}`,
      c.call,
    ];
  });
}

/**
 * A figure as the load report prints it, as a number and its unit: "123 ms" is 123 ms, "2.34 s" 2.34 s, "0" a count
 * (unit ""); undefined for anything else ("n/a", "810 / 810 (…)").
 */
export function figureValue(text) {
  const match = /^(\d+(?:\.\d+)?)(?: (ms|s))?$/.exec(text.trim());
  return match ? { value: Number(match[1]), unit: match[2] ?? "" } : undefined;
}

function runs(values, unit) {
  const format = unit ? fixed : String;
  const shown = values.map(format).join(" / ");
  const text = values.length > 2 ? `${format(median(values))} (${shown})` : shown;
  return unit ? `${text} ${unit}` : text;
}

function percent(value) {
  return Number.isNaN(value) ? "n/a" : Number.isFinite(value) ? `${Math.round(value * 100)} %` : "∞";
}
