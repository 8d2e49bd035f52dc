export type Build = "baseline" | "current";

export function orderOf(round: number): [Build, Build];

export function spread(values: number[]): number;

export interface Comparison {
  before: number;
  after: number;
  ratio: number;
  spreadBefore: number;
  spreadAfter: number;
  call: "same" | "within spread" | "WORSE, beyond spread" | "better, beyond spread" | "no spread (one run)";
}

export function compare(before: number[], after: number[]): Comparison;

export const PAIR_HEADER: string[];

export interface PairedFigure {
  name: string;
  /** "ms", "s", or "" for a count. */
  unit: string;
  /** The baseline's runs of the figure, and this build's. */
  before: number[];
  after: number[];
}

export function pairRows(figures: PairedFigure[]): string[][];

export function figureValue(text: string): { value: number; unit: string } | undefined;
