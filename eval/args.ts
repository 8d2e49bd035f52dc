import { parseArgs } from "node:util";
import type { Prices } from "./scoring.js";

export interface EvalArgs {
  help: boolean;
  baseUrl: string;
  apiKey: string | undefined;
  model: string | undefined;
  tasks: string[] | undefined;
  runs: number;
  concurrency: number;
  feedback: string | undefined;
  prices: Prices | null;
  outDir: string;
  keep: boolean;
}

export class EvalUsageError extends Error {}

export const EVAL_USAGE = `npm run eval -- [options]

Runs every task in eval/suites/smoke/ through \`blueprint plan\` then \`blueprint build\` on a fresh
repository, then the task's hidden check, and reports plan and build quality.

Options:
  --base-url URL        OpenAI-compatible endpoint   (env OPENAI_BASE_URL; default https://api.openai.com/v1)
  --api-key KEY         its API key                  (env OPENAI_API_KEY)
  --model NAME          model name                   (env BLUEPRINT_MODEL; default: the CLI's)
  --tasks a,b           only these tasks (folder names in eval/suites/smoke/)
  --runs N              run each task N times and report the spread (default 1)
  --concurrency N       tasks at once (default 1)
  --feedback TEXT       one scripted revise round between plan and build
  --price-in USD        dollars per million prompt tokens        (env BLUEPRINT_EVAL_PRICE_IN)
  --price-cached USD    dollars per million cached prompt tokens (env BLUEPRINT_EVAL_PRICE_CACHED; default --price-in)
  --price-out USD       dollars per million completion tokens    (env BLUEPRINT_EVAL_PRICE_OUT)
  --out DIR             where the JSON, Markdown and logs go (default eval/results)
  --keep                keep each run's scratch repository
  -h, --help            this text

BLUEPRINT_* limits in the environment (BLUEPRINT_MAX_ITERATIONS, BLUEPRINT_SANDBOX, …) are passed to the CLI.`;

const OPTIONS = {
  help: { type: "boolean", short: "h" },
  "base-url": { type: "string" },
  "api-key": { type: "string" },
  model: { type: "string" },
  tasks: { type: "string" },
  runs: { type: "string" },
  concurrency: { type: "string" },
  feedback: { type: "string" },
  "price-in": { type: "string" },
  "price-cached": { type: "string" },
  "price-out": { type: "string" },
  out: { type: "string" },
  keep: { type: "boolean" },
} as const;

export function parseEvalArgs(argv: string[], env: NodeJS.ProcessEnv, defaultOutDir: string): EvalArgs {
  let values;
  try {
    ({ values } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: false, strict: true }));
  } catch (error) {
    throw new EvalUsageError(error instanceof Error ? error.message : String(error));
  }
  const priceIn = price("--price-in", values["price-in"] ?? env.BLUEPRINT_EVAL_PRICE_IN);
  const priceOut = price("--price-out", values["price-out"] ?? env.BLUEPRINT_EVAL_PRICE_OUT);
  const priceCached = price("--price-cached", values["price-cached"] ?? env.BLUEPRINT_EVAL_PRICE_CACHED);
  if ((priceIn === undefined) !== (priceOut === undefined)) throw new EvalUsageError("give both --price-in and --price-out (dollars per million tokens), or neither.");
  const tasks = values.tasks
    ?.split(",")
    .map((id) => id.trim())
    .filter((id) => id !== "");
  return {
    help: values.help ?? false,
    baseUrl: values["base-url"] ?? env.OPENAI_BASE_URL ?? "https://api.openai.com/v1",
    apiKey: values["api-key"] ?? env.OPENAI_API_KEY,
    model: values.model ?? env.BLUEPRINT_MODEL,
    tasks: tasks && tasks.length > 0 ? tasks : undefined,
    runs: positive("--runs", values.runs, 1),
    concurrency: positive("--concurrency", values.concurrency, 1),
    feedback: values.feedback?.trim() || undefined,
    prices: priceIn !== undefined && priceOut !== undefined ? { input: priceIn, output: priceOut, cached: priceCached } : null,
    outDir: values.out ?? defaultOutDir,
    keep: values.keep ?? false,
  };
}

function positive(flag: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new EvalUsageError(`${flag} needs a whole number of at least 1, not "${raw}".`);
  return value;
}

function price(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new EvalUsageError(`${flag} needs dollars per million tokens (e.g. 2.5), not "${raw}".`);
  return value;
}
