export const FUNCTION_LIMIT: number;
export const FILE_LIMIT: number;

export interface MeasuredFunction {
  name: string;
  /** First and last line, 1-based and inclusive. */
  start: number;
  end: number;
  lines: number;
}

/** Every function in one TypeScript source text, and the text's line count. */
export function measureSource(fileName: string, text: string): { lines: number; functions: MeasuredFunction[] };

/** Every TypeScript source under `dir` (declaration files left out), as full paths. */
export function sourceFiles(dir: string): string[];

/** Every TypeScript file under `dir` (paths relative to `root`, with forward slashes) and its functions. */
export function measureTree(
  root: string,
  dir?: string,
): Array<{ file: string; lines: number; functions: MeasuredFunction[] }>;
