// Small helpers the load bench's modules share: figures as text, percentiles, a table.

/** Milliseconds as seconds: two decimals below 10 s (a burst's CPU), one above. */
export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

export const ms = (value: number | undefined): string =>
  value === undefined || !Number.isFinite(value) ? "n/a" : `${Math.round(value)} ms`;

export const met = (ok: boolean): string => (ok ? "met" : "NOT MET");

export function percentile(values: number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max([...h].length, ...rows.map((row) => [...(row[i] ?? "")].length)));
  const line = (cells: string[]) =>
    `| ${cells.map((cell, i) => cell + " ".repeat((widths[i] ?? 0) - [...cell].length)).join(" | ")} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const row of rows) console.log(line(row));
}

export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
