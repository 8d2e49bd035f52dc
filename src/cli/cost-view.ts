import { markdownToText } from "./text-view.js";

/** A cost the App rendered with a price (workflow/cost.ts): dollars in bold. Without a price it prints tokens only. */
const PRICED = /\*\*(<?\$[\d.,]+)\*\*/;

/**
 * The cost lines of a plan comment, as the App renders them (workflow/cost.ts) and `--markdown`
 * prints them, for the terminal: what planning cost and the build's estimate under a new plan; the
 * cost of each step and the total after a build. Only when the model has a price: without one they
 * would be token counts, which `--markdown` still shows.
 */
export function costText(commentBody: string): string {
  const lines: string[] = [];
  const planning = /<sub>Planning: ([^\n]*?)\.?<\/sub>/.exec(commentBody)?.[1];
  if (planning && PRICED.test(planning)) lines.push(`Planning cost: ${markdownToText(planning)}`);
  const estimate = /\*\*Estimated build cost:\*\* ([^\n]*)/.exec(commentBody)?.[1];
  if (estimate && PRICED.test(estimate))
    lines.push(
      `Estimated build cost: ${markdownToText(estimate)}`,
      "  (a guess from the plan's steps, not a measurement: `blueprint status --markdown` shows what it assumes)",
    );
  const table = costTable(commentBody);
  if (table) lines.push(table);
  const thisBuild = /<sub>This build: ([^\n]*?)\.?<\/sub>/.exec(commentBody)?.[1];
  if (thisBuild && PRICED.test(thisBuild)) lines.push(`This build: ${markdownToText(thisBuild)}`);
  return lines.join("\n");
}

/** The build report's "Cost" table, priced (it has a Cost column), as aligned columns. */
function costTable(commentBody: string): string {
  const section = /#### Cost\n\n((?:\|[^\n]*\|\n?)+)/.exec(commentBody)?.[1];
  if (!section) return "";
  const rows = section
    .trim()
    .split("\n")
    .filter((row) => !/^\|[-:| ]+\|$/.test(row))
    .map((row) =>
      row
        .slice(1, -1)
        .split("|")
        .map((cell) => markdownToText(cell.trim())),
    );
  const [header] = rows;
  if (!header?.includes("Cost")) return "";
  const widths = header.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length)));
  // Labels left, numbers right, as the markdown table aligns them.
  const line = (row: string[]) =>
    `  ${row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0))).join("   ")}`.trimEnd();
  return ["Cost per step", ...rows.map(line)].join("\n");
}
