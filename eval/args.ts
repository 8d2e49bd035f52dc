import { parseArgs } from "node:util";
import type { SuiteChoice } from "./items.js";
import type { Prices } from "./scoring.js";

export interface EvalArgs {
  help: boolean;
  /** Which items: a shipped suite, or an external SWE-bench-format dataset with its repositories. */
  choice: SuiteChoice;
  /** Only validate the chosen items (print a table), run nothing. */
  validate: boolean;
  validateFirst: boolean;
  taskTimeoutMs: number;
  resume: string | undefined;
  /** The exit code is 1 when the share of passing runs is below this; unset: when no run passes. */
  failUnder: number | undefined;
  preflight: boolean;
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
  /** The npm registry the smoke suite's packages come from; unset: npm's configured one. */
  registry: string | undefined;
  /** Where fetched sources are kept (smoke tarballs, real-suite clones); unset: $XDG_CACHE_HOME/blueprint-eval. */
  cacheDir: string | undefined;
}

export class EvalUsageError extends Error {}

const DEFAULT_TASK_TIMEOUT_S = 1_800;

export const EVAL_USAGE = `npm run eval -- [options]
npm run eval -- compare A.json B.json

Runs each task through \`blueprint plan\` then \`blueprint build\` on a fresh repository, judges the
result, and reports success, plan and build quality, tokens, cost and time.

What to run:
  --suite real|smoke    real: eval/suites/real/ (real repositories, judged by their own tests; default);
                        smoke: eval/suites/smoke/ (16 small tasks with hidden checks, quick; their packages
                        are fetched from the npm registry and cached)
  --dataset FILE.jsonl  SWE-bench-format instances instead of a suite …
  --repos DIR           … with each repository under DIR (DIR/<owner>__<name>, DIR/<owner>/<name> or DIR/<name>);
                        with the real suite: take its repositories from DIR instead of fetching them
  --trust-dataset-commands
                        run the install and test_cmd commands a --dataset's instances carry (refused without it;
                        they run in the sandbox like every install and test)
  --tasks a,b           only these tasks (folder names, or instance ids)
  --registry URL        the npm registry the smoke tasks' packages come from (env npm_config_registry;
                        default: npm's configured registry)
  --cache DIR           where fetched sources are kept: the smoke tasks' tarballs, the real suite's clones
                        (env BLUEPRINT_EVAL_CACHE; default $XDG_CACHE_HOME/blueprint-eval or ~/.cache/blueprint-eval)
  --validate            only validate the chosen tasks (gold patch: FAIL_TO_PASS fails before, all pass after;
                        a smoke task's check fails on the earlier version, passes with the change);
                        prints a table, exits 1 if any fails
  --validate-first      validate each task before running it; one that fails is never scored
  --runs N              run each task N times: the spread, pass@1 and pass@N (default 1)
  --concurrency N       tasks at once (default 1)
  --feedback TEXT       one scripted revise round between plan and build

The model:
  --base-url URL        OpenAI-compatible endpoint   (env OPENAI_BASE_URL; default https://api.openai.com/v1)
  --api-key KEY         its API key                  (env OPENAI_API_KEY)
  --model NAME          model name                   (env BLUEPRINT_MODEL; default: the CLI's)
  --no-preflight        skip the check of the endpoint and key before the first task
  --price-in USD        dollars per million prompt tokens        (env BLUEPRINT_EVAL_PRICE_IN)
  --price-cached USD    dollars per million cached prompt tokens (env BLUEPRINT_EVAL_PRICE_CACHED; default --price-in)
  --price-out USD       dollars per million completion tokens    (env BLUEPRINT_EVAL_PRICE_OUT)

The run:
  --task-timeout S      limit on one run: checkout, install, plan, build and judging (default ${DEFAULT_TASK_TIMEOUT_S});
                        past it the CLI's process group is killed and the run fails with "time limit (S s)"
  --resume FILE.json    continue the run that wrote FILE.json: runs in it are kept, the rest run, FILE.json is updated
  --fail-under RATE     exit 1 when the share of runs that pass is below RATE (0–1, or a percentage like 40%);
                        without it, exit 1 when no run passes
  --out DIR             where the JSON, Markdown, SVG chart and logs go (default eval/results)
  --keep                keep each run's scratch repository
  -h, --help            this text

Exit status: 0 passed the bar; 1 below it, or a run the harness could not complete; 2 bad arguments,
or an endpoint or key that does not work.
BLUEPRINT_* limits in the environment (BLUEPRINT_MAX_ITERATIONS, BLUEPRINT_MODEL_TIMEOUT_S, BLUEPRINT_SANDBOX, …) are passed to the CLI.`;

const OPTIONS = {
  help: { type: "boolean", short: "h" },
  suite: { type: "string" },
  dataset: { type: "string" },
  repos: { type: "string" },
  validate: { type: "boolean" },
  "validate-first": { type: "boolean" },
  "task-timeout": { type: "string" },
  resume: { type: "string" },
  "fail-under": { type: "string" },
  "no-preflight": { type: "boolean" },
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
  registry: { type: "string" },
  cache: { type: "string" },
  "trust-dataset-commands": { type: "boolean" },
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
  if ((priceIn === undefined) !== (priceOut === undefined))
    throw new EvalUsageError("give both --price-in and --price-out (dollars per million tokens), or neither.");
  const tasks = values.tasks
    ?.split(",")
    .map((id) => id.trim())
    .filter((id) => id !== "");
  if (values.dataset !== undefined && values.repos === undefined)
    throw new EvalUsageError("--dataset FILE.jsonl needs --repos DIR, where its repositories are.");
  if (values.dataset !== undefined && values.suite !== undefined)
    throw new EvalUsageError("give --suite or --dataset, not both.");
  const suite = values.suite ?? "real";
  if (suite !== "real" && suite !== "smoke") throw new EvalUsageError(`--suite is real or smoke, not "${suite}".`);
  if (suite === "smoke" && values.repos !== undefined)
    throw new EvalUsageError("--repos is for --dataset or the real suite, not the smoke suite.");
  const trust = values["trust-dataset-commands"] ?? false;
  if (trust && values.dataset === undefined)
    throw new EvalUsageError(
      "--trust-dataset-commands is for --dataset: the shipped suites' commands are reviewed here.",
    );
  const choice: SuiteChoice =
    values.dataset !== undefined && values.repos !== undefined
      ? { dataset: values.dataset, reposDir: values.repos, trustCommands: trust }
      : { suite, reposDir: values.repos };
  return {
    help: values.help ?? false,
    choice,
    validate: values.validate ?? false,
    validateFirst: values["validate-first"] ?? false,
    taskTimeoutMs: positive("--task-timeout", values["task-timeout"], DEFAULT_TASK_TIMEOUT_S) * 1000,
    resume: values.resume,
    failUnder: rate(values["fail-under"]),
    preflight: !(values["no-preflight"] ?? false),
    baseUrl: values["base-url"] ?? env.OPENAI_BASE_URL ?? "https://api.openai.com/v1",
    apiKey: values["api-key"] ?? env.OPENAI_API_KEY,
    model: values.model ?? env.BLUEPRINT_MODEL,
    tasks: tasks && tasks.length > 0 ? tasks : undefined,
    runs: positive("--runs", values.runs, 1),
    concurrency: positive("--concurrency", values.concurrency, 1),
    feedback: values.feedback?.trim() || undefined,
    prices:
      priceIn !== undefined && priceOut !== undefined
        ? { input: priceIn, output: priceOut, cached: priceCached }
        : null,
    outDir: values.out ?? defaultOutDir,
    keep: values.keep ?? false,
    registry: values.registry ?? (env.npm_config_registry || undefined),
    cacheDir: values.cache ?? (env.BLUEPRINT_EVAL_CACHE || undefined),
  };
}

function positive(flag: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1)
    throw new EvalUsageError(`${flag} needs a whole number of at least 1, not "${raw}".`);
  return value;
}

function price(flag: string, raw: string | undefined): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0)
    throw new EvalUsageError(`${flag} needs dollars per million tokens (e.g. 2.5), not "${raw}".`);
  return value;
}

function rate(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const percent = raw.trim().endsWith("%");
  const value = Number(percent ? raw.trim().slice(0, -1) : raw);
  const share = percent ? value / 100 : value;
  if (raw.trim() === "" || !Number.isFinite(share) || share < 0 || share > 1)
    throw new EvalUsageError(`--fail-under needs a share from 0 to 1 (or a percentage like 40%), not "${raw}".`);
  return share;
}
