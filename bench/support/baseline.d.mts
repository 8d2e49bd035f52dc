export interface Baseline {
  /** The ref as BENCH_BASELINE gave it, and the commit it names. */
  ref: string;
  commit: string;
  /** The built copy: lib/, node_modules/ and package.json, as in a checkout. */
  root: string;
  /** "<ref> (<short commit>)", for tables. */
  label: string;
}

/** BENCH_BASELINE_ROUNDS (2). */
export const BASELINE_ROUNDS: number;

export function baselineRef(): string | null;

export function builtBaseline(ref: string): Promise<Baseline>;
