import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

export type CliCommand =
  | { name: "help" }
  | { name: "version" }
  | { name: "plan"; instructions: string; newThread: boolean }
  | { name: "build"; args: string[] }
  | { name: "revise"; feedback: string }
  | { name: "fix"; notes: string }
  | { name: "answer"; text: string }
  | { name: "cancel" }
  | { name: "status" }
  | { name: "map"; focus: string[]; tokens: number | undefined };

export interface ModelFlags {
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
  model?: string | undefined;
}

export interface CliArgs {
  command: CliCommand;
  /** Print the plan as the markdown the App posts, not the terminal view. */
  markdown: boolean;
  /** Log the engine's progress lines to stderr. */
  verbose: boolean;
  model: ModelFlags;
  /** Limits and time-outs given as flags, as the environment variables they override. */
  limits: Record<string, string>;
}

/** A mistake in how the CLI was called; the message says what to type instead. */
export class UsageError extends Error {}

/**
 * Every limit and time-out the CLI takes as a flag, with the environment variable it sets and the
 * value it takes: a whole number (at least `min`), or dollars (above 0, cents allowed: 0.50).
 */
export const LIMIT_FLAGS = {
  "max-iterations": {
    env: "BLUEPRINT_MAX_ITERATIONS",
    value: "N",
    min: 1,
    help: "model turns per planning run or build step (default 50)",
  },
  "max-minutes": {
    env: "BLUEPRINT_MAX_MINUTES",
    value: "N",
    min: 1,
    help: "wall time per planning run or build step (default 20)",
  },
  "max-tokens": {
    env: "BLUEPRINT_MAX_TOKENS",
    value: "N",
    min: 1,
    help: "tokens per planning run or build step (default 2000000)",
  },
  "max-cost": {
    env: "BLUEPRINT_MAX_COST",
    value: "DOLLARS",
    help: "dollars per build (e.g. 0.50), counted with the model's prices (default no cap)",
  },
  "model-timeout": {
    env: "BLUEPRINT_MODEL_TIMEOUT_S",
    value: "N",
    min: 1,
    help: "seconds the model endpoint may stay silent: before it starts answering, or within an answer (default 60)",
  },
  "model-retries": {
    env: "BLUEPRINT_MODEL_RETRIES",
    value: "N",
    min: 0,
    help: "retries of a failed or timed-out model request (default 3)",
  },
} as const;
type LimitFlag = keyof typeof LIMIT_FLAGS;

const OPTIONS = {
  help: { type: "boolean", short: "h" },
  markdown: { type: "boolean" },
  verbose: { type: "boolean", short: "v" },
  fresh: { type: "boolean" },
  force: { type: "boolean" },
  new: { type: "boolean" },
  "base-url": { type: "string" },
  "api-key": { type: "string" },
  model: { type: "string" },
  tokens: { type: "string" },
  version: { type: "boolean", short: "V" },
  "max-iterations": { type: "string" },
  "max-minutes": { type: "string" },
  "max-tokens": { type: "string" },
  "max-cost": { type: "string" },
  "model-timeout": { type: "string" },
  "model-retries": { type: "string" },
} as const;

export function parseCliArgs(argv: string[]): CliArgs {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(parseErrorMessage(error));
  }
  const { values, positionals } = parsed;
  const [name, ...rest] = positionals;
  const common = {
    markdown: values.markdown ?? false,
    verbose: values.verbose ?? false,
    model: {
      baseUrl: stringValue(values["base-url"]),
      apiKey: stringValue(values["api-key"]),
      model: stringValue(values.model),
    },
    limits: limitsFrom(values),
  };
  const onlyFor = (flag: "fresh" | "force" | "new" | "tokens", command: string) => {
    if (values[flag] && name !== command) throw new UsageError(`--${flag} only goes with \`blueprint ${command}\`.`);
  };
  onlyFor("fresh", "build");
  onlyFor("force", "build");
  onlyFor("new", "plan");
  onlyFor("tokens", "map");
  if (values.version) return { command: { name: "version" }, ...common };
  if (values.help || name === undefined || name === "help") return { command: { name: "help" }, ...common };
  const text = rest.join(" ").trim();

  switch (name) {
    case "plan":
      return { command: { name: "plan", instructions: text, newThread: values.new ?? false }, ...common };
    case "build":
      // Flags first: after the step ids, the words are the build's notes (`blueprint build S2 "keep the API" --fresh`).
      return {
        command: {
          name: "build",
          args: [...(values.fresh ? ["--fresh"] : []), ...(values.force ? ["--force"] : []), ...rest],
        },
        ...common,
      };
    case "revise":
      if (!text)
        throw new UsageError(
          '`blueprint revise` needs feedback, e.g. blueprint revise "keep the public API as it is".',
        );
      return { command: { name: "revise", feedback: text }, ...common };
    case "fix":
      // No review threads locally: the notes are the whole follow-up.
      if (!text)
        throw new UsageError('`blueprint fix` needs what to fix, e.g. blueprint fix "log each retry at debug level".');
      return { command: { name: "fix", notes: text }, ...common };
    case "answer":
      if (!text)
        throw new UsageError('`blueprint answer` needs the answer, e.g. blueprint answer "use the v2 endpoint".');
      return { command: { name: "answer", text }, ...common };
    case "map": {
      const tokens = values.tokens === undefined ? undefined : Number(values.tokens);
      if (tokens !== undefined && !(Number.isInteger(tokens) && tokens >= 256 && tokens <= 16_384))
        throw new UsageError("--tokens takes a whole number from 256 to 16384.");
      return { command: { name: "map", focus: rest, tokens }, ...common };
    }
    case "status":
    case "cancel":
      if (rest.length > 0) throw new UsageError(`\`blueprint ${name}\` takes no arguments.`);
      return { command: { name }, ...common };
    default:
      throw new UsageError(`unknown command \`${name}\`.`);
  }
}

const VALUE_EXAMPLES: Record<string, string> = {
  "--base-url": "http://localhost:11434/v1",
  "--api-key": "sk-…",
  "--model": "gpt-4.1",
  "--max-cost": "0.50",
};

/** Node's parse errors, reworded for a person: which flag, and what to do instead. */
function parseErrorMessage(error: unknown): string {
  const code = error instanceof Error && "code" in error ? error.code : undefined;
  const message = error instanceof Error ? error.message : String(error);
  const flag = /'(-[^' ]+)/.exec(message)?.[1] ?? "";
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const near = nearestOption(flag);
    return `unknown option \`${flag}\`${near ? ` (did you mean \`--${near}\`?)` : ""}. To pass text that starts with "-", put it after \`--\`.`;
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    return /argument missing/.test(message)
      ? `\`${flag}\` needs a value, e.g. ${flag} ${VALUE_EXAMPLES[flag] ?? "N"}.`
      : `\`${flag}\` takes no value.`;
  }
  return message;
}

function nearestOption(flag: string): string | null {
  const typed = flag.replace(/^-+/, "").split("=")[0] ?? "";
  let best: { name: string; distance: number } | null = null;
  for (const name of Object.keys(OPTIONS)) {
    const distance = editDistance(typed, name);
    if (distance <= (name.length < 5 ? 1 : 2) && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name ?? null;
}

function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(
        (row[j] ?? 0) + 1,
        (next[j - 1] ?? 0) + 1,
        (row[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    row = next;
  }
  return row[b.length] ?? 0;
}

function stringValue(value: string | boolean | undefined): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function limitsFrom(values: Record<string, string | boolean | undefined>): Record<string, string> {
  const limits: Record<string, string> = {};
  for (const [flag, limit] of Object.entries(LIMIT_FLAGS) as Array<[LimitFlag, (typeof LIMIT_FLAGS)[LimitFlag]]>) {
    const value = stringValue(values[flag]);
    if (value === undefined) continue;
    if (limit.value === "DOLLARS") {
      if (!/^(\d+(\.\d*)?|\.\d+)$/.test(value) || Number(value) <= 0)
        throw new UsageError(
          `\`--${flag}\` needs an amount in dollars above 0, e.g. --${flag} 0.50, not \`${value}\`.`,
        );
    } else if (!/^\d+$/.test(value) || Number(value) < limit.min) {
      throw new UsageError(`\`--${flag}\` needs a whole number${limit.min > 0 ? " above 0" : ""}, not \`${value}\`.`);
    }
    limits[limit.env] = value;
  }
  return limits;
}

/**
 * The version in our package.json: one directory above the bundled CLI (lib/cli.js), two above this file in src/cli/.
 */
export function cliVersion(): string {
  for (const relative of ["../package.json", "../../package.json"]) {
    let manifest: unknown;
    try {
      manifest = JSON.parse(readFileSync(new URL(relative, import.meta.url), "utf8"));
    } catch {
      continue;
    }
    if (typeof manifest !== "object" || manifest === null || !("name" in manifest)) continue;
    if (manifest.name !== "blueprint-plan-gate") continue;
    return "version" in manifest && typeof manifest.version === "string" ? manifest.version : "unknown";
  }
  return "unknown";
}

const limitLines = Object.entries(LIMIT_FLAGS)
  .map(
    ([flag, limit]) => `  --${`${flag} ${limit.value}`.padEnd(20)}${limit.help}\n${" ".repeat(24)}(env ${limit.env})`,
  )
  .join("\n");

export const USAGE = `Blueprint — plan → approve → build, on your local checkout

Usage:
  blueprint plan "instructions"     explore the committed code read-only and print a plan
  blueprint revise "feedback"       make the next revision of the plan
  blueprint answer "text"           answer the question Blueprint asked, and resume
  blueprint cancel                  withdraw the question Blueprint is waiting on
  blueprint build [S2 …] [--fresh] [--force]
                                    build the latest plan on branch blueprint/issue-<n>,
                                    one commit per step (named steps and what they need)
  blueprint fix "what to fix"       once the plan is built: a fix-up step (F1, F2, …) committed
                                    on the same branch, with the build's rules
  blueprint status                  where the current plan stands
  blueprint map [focus …] [--tokens N]
                                    the repository map the agent starts from: definitions
                                    ranked by use, focus (paths, symbols) first
  blueprint --help                  this text

Options:
  --markdown            print the plan as the markdown the GitHub App posts
  --new                 (plan) start a new plan instead of revising the current one
  --fresh               (build) build steps from the plan alone, without planning's context
  --force               (build) build a plan marked stale
  --tokens N            (map) the map's size in tokens (default 2048)
  --base-url URL        OpenAI-compatible endpoint      (env OPENAI_BASE_URL)
  --api-key KEY         its API key                     (env OPENAI_API_KEY)
  --model NAME          model name                      (env BLUEPRINT_MODEL; default gpt-4.1)
  -v, --verbose         log what the engine does to stderr, model retries included
  -V, --version         print Blueprint's version

Limits and time-outs (flags win over the environment):
${limitLines}

Blueprint reads the committed state of the current branch (uncommitted changes are not
seen) and keeps its thread — the plan and its history — in .git/blueprint/.
Ctrl-C stops a running plan or build at the next safe point; blueprint build resumes it.
Exit status: 0 done, 1 failed or refused, 2 usage error, 130 interrupted.`;
