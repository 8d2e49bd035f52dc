import { parseArgs } from "node:util";

export type CliCommand =
  | { name: "help" }
  | { name: "plan"; instructions: string; newThread: boolean }
  | { name: "build"; args: string[] }
  | { name: "revise"; feedback: string }
  | { name: "answer"; text: string }
  | { name: "cancel" }
  | { name: "status" };

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
}

/** A mistake in how the CLI was called; the message says what to type instead. */
export class UsageError extends Error {}

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
} as const;

export function parseCliArgs(argv: string[]): CliArgs {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  const [name, ...rest] = positionals;
  const common = {
    markdown: values.markdown ?? false,
    verbose: values.verbose ?? false,
    model: { baseUrl: values["base-url"], apiKey: values["api-key"], model: values.model },
  };
  const onlyFor = (flag: "fresh" | "force" | "new", command: string) => {
    if (values[flag] && name !== command) throw new UsageError(`--${flag} only goes with \`blueprint ${command}\`.`);
  };
  onlyFor("fresh", "build");
  onlyFor("force", "build");
  onlyFor("new", "plan");
  if (values.help || name === undefined || name === "help") return { command: { name: "help" }, ...common };
  const text = rest.join(" ").trim();

  switch (name) {
    case "plan":
      return { command: { name: "plan", instructions: text, newThread: values.new ?? false }, ...common };
    case "build":
      // Flags first: after the step ids, the words are the build's notes (`blueprint build S2 "keep the API" --fresh`).
      return { command: { name: "build", args: [...(values.fresh ? ["--fresh"] : []), ...(values.force ? ["--force"] : []), ...rest] }, ...common };
    case "revise":
      if (!text) throw new UsageError('`blueprint revise` needs feedback, e.g. blueprint revise "keep the public API as it is".');
      return { command: { name: "revise", feedback: text }, ...common };
    case "answer":
      if (!text) throw new UsageError('`blueprint answer` needs the answer, e.g. blueprint answer "use the v2 endpoint".');
      return { command: { name: "answer", text }, ...common };
    case "status":
    case "cancel":
      if (rest.length > 0) throw new UsageError(`\`blueprint ${name}\` takes no arguments.`);
      return { command: { name }, ...common };
    default:
      throw new UsageError(`unknown command \`${name}\`.`);
  }
}

export const USAGE = `Blueprint — plan → approve → build, on your local checkout

Usage:
  blueprint plan "instructions"     explore the committed code read-only and print a plan
  blueprint revise "feedback"       make the next revision of the plan
  blueprint answer "text"           answer the question Blueprint asked, and resume
  blueprint cancel                  withdraw the question Blueprint is waiting on
  blueprint build [S2 …] [--fresh] [--force]
                                    build the latest plan on branch blueprint/issue-<n>,
                                    one commit per step (named steps and what they need)
  blueprint status                  where the current plan stands
  blueprint --help                  this text

Options:
  --markdown            print the plan as the markdown the GitHub App posts
  --new                 (plan) start a new plan instead of revising the current one
  --fresh               (build) build steps from the plan alone, without planning's context
  --force               (build) build a plan marked stale
  --base-url URL        OpenAI-compatible endpoint      (env OPENAI_BASE_URL)
  --api-key KEY         its API key                     (env OPENAI_API_KEY)
  --model NAME          model name                      (env BLUEPRINT_MODEL; default gpt-4.1)
  -v, --verbose         log what the engine does to stderr

Blueprint reads the committed state of the current branch (uncommitted changes are not
seen) and keeps its thread — the plan and its history — in .git/blueprint/.
Ctrl-C stops a running plan or build at the next safe point; blueprint build resumes it.
Exit status: 0 done, 1 failed or refused, 2 usage error, 130 interrupted.`;
