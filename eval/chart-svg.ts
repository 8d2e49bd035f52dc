import type { EvalReport } from "./runner.js";

export interface ChartPoint {
  task: string;
  /** Mean cost per run in dollars, or mean tokens per run when no prices were given. */
  x: number;
  /** Share of runs that passed, 0–1. */
  y: number;
}

const WIDTH = 720;
const HEIGHT = 420;
const MARGIN = { left: 70, right: 30, top: 50, bottom: 60 };

/** Success against cost per task: one circle per task, its name in a tooltip and beside it. */
export function renderChart(report: EvalReport): string {
  const priced = report.runs.length > 0 && report.runs.every((run) => run.cost !== null);
  const points: ChartPoint[] = report.tasks
    .filter((entry) => entry.summary.runs > 0)
    .map((entry) => ({
      task: entry.task,
      x: priced
        ? (entry.summary.cost?.mean ?? 0)
        : (entry.summary.promptTokens?.mean ?? 0) + (entry.summary.completionTokens?.mean ?? 0),
      y: entry.summary.checkPassed / entry.summary.runs,
    }));
  return chartSvg(
    points,
    priced ? "mean cost per run ($)" : "mean tokens per run (prompt + completion; no prices given)",
    `${report.suite}: success against cost per task — ${report.model ?? "the CLI's default model"}, ${report.runsPerTask} run${report.runsPerTask === 1 ? "" : "s"} per task`,
  );
}

export function chartSvg(points: ChartPoint[], xLabel: string, title: string): string {
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const maxX = niceMax(Math.max(0, ...points.map((point) => point.x)));
  const sx = (x: number) => MARGIN.left + (maxX === 0 ? 0 : (x / maxX) * plotW);
  const sy = (y: number) => MARGIN.top + (1 - y) * plotH;
  const ticksX = [0, 0.2, 0.4, 0.6, 0.8, 1].map((share) => share * maxX);
  const ticksY = [0, 0.25, 0.5, 0.75, 1];
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`,
    `<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="14">${escapeXml(title)}</text>`,
    ...ticksY.map(
      (y) =>
        `<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${sy(y)}" y2="${sy(y)}" stroke="#e5e5e5"/><text x="${MARGIN.left - 8}" y="${sy(y) + 4}" text-anchor="end">${Math.round(y * 100)}%</text>`,
    ),
    ...ticksX.map(
      (x) =>
        `<line x1="${round(sx(x))}" x2="${round(sx(x))}" y1="${MARGIN.top}" y2="${MARGIN.top + plotH}" stroke="#e5e5e5"/><text x="${sx(x)}" y="${MARGIN.top + plotH + 18}" text-anchor="middle">${tickLabel(x, maxX)}</text>`,
    ),
    `<line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${MARGIN.top + plotH}" stroke="#333333"/>`,
    `<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${MARGIN.top + plotH}" y2="${MARGIN.top + plotH}" stroke="#333333"/>`,
    `<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 16}" text-anchor="middle">${escapeXml(xLabel)}</text>`,
    `<text x="18" y="${MARGIN.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 18 ${MARGIN.top + plotH / 2})">tasks' runs that passed</text>`,
    ...points.map(
      (point) =>
        `<g class="task"><circle cx="${round(sx(point.x))}" cy="${round(sy(point.y))}" r="6" fill="${point.y >= 0.5 ? "#2e7d32" : "#c62828"}" fill-opacity="0.75"><title>${escapeXml(`${point.task}: ${Math.round(point.y * 100)}% passed, ${tickLabel(point.x, maxX)}`)}</title></circle><text x="${round(sx(point.x) + (point.x > maxX / 2 ? -9 : 9))}" y="${round(sy(point.y) - 9)}" text-anchor="${point.x > maxX / 2 ? "end" : "start"}" font-size="10" fill="#444444">${escapeXml(point.task)}</text></g>`,
    ),
    "</svg>",
  ];
  return `${parts.join("\n")}\n`;
}

function niceMax(value: number): number {
  if (value <= 0) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  const step = [1, 2, 2.5, 5, 10].find((candidate) => candidate * magnitude >= value) ?? 10;
  return step * magnitude;
}

/** Ticks are fifths of a round maximum: as many decimals as a fifth needs, thousands with commas. */
function tickLabel(value: number, max: number): string {
  const decimals = Math.max(0, -Math.floor(Math.log10(max / 5) + 1e-9));
  return decimals === 0 ? Math.round(value).toLocaleString("en-US") : value.toFixed(decimals);
}

const round = (value: number) => Math.round(value * 10) / 10;

function escapeXml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}
