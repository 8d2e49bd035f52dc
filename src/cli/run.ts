import os from "node:os";
import { ConfigError, loadEnv, type BlueprintEnv } from "../config/env.js";
import { createWorkflowDeps } from "../app/create-deps.js";
import type { Logger, WorkflowDeps } from "../workflow/deps.js";
import { modelRetryLine } from "../workflow/surfaces/index.js";
import { cliVersion, parseCliArgs, UsageError, USAGE, type CliArgs, type CliCommand } from "./args.js";
import { CliError, findCheckout, type Checkout } from "./checkout.js";
import { createLocalThread, storedThreadState } from "./local-port.js";
import { progressPrinter } from "./progress.js";
import { printOutcome, printStatus } from "./report.js";
import { runComment } from "./session.js";
import { ThreadStore, type StoredThread } from "./thread-store.js";
import { buildRepoMap } from "../tools/repo-map/build-map.js";

export interface CliContext {
  argv: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdout(text: string): void;
  stderr(text: string): void;
  /** Registers what Ctrl-C does while a job runs. */
  onInterrupt(stop: () => void): void;
}

export const EXIT = { ok: 0, failed: 1, usage: 2, interrupted: 130 } as const;

/** The CLI from arguments to exit status. */
export async function runCli(cli: CliContext): Promise<number> {
  // 1. What was asked.
  let args: CliArgs;
  try {
    args = parseCliArgs(cli.argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    cli.stderr(`blueprint: ${error.message}\nRun \`blueprint --help\` for usage.`);
    return EXIT.usage;
  }
  if (args.command.name === "help") {
    cli.stdout(USAGE);
    return EXIT.ok;
  }
  if (args.command.name === "map") return printRepoMap(cli, args.command);
  if (args.command.name === "version") {
    cli.stdout(`blueprint ${cliVersion()}`);
    return EXIT.ok;
  }

  try {
    // 2. The checkout, and one command at a time on it.
    const checkout = await findCheckout(cli.cwd);
    const store = new ThreadStore(checkout.gitDir);
    const unlock = await store.lock();
    try {
      return await runCommand(cli, args, args.command, checkout, store);
    } finally {
      await unlock();
    }
  } catch (error) {
    if (error instanceof CliError || error instanceof ConfigError) {
      cli.stderr(`blueprint: ${error.message}`);
      return EXIT.failed;
    }
    throw error;
  }
}

/** `blueprint map`: read-only and thread-free (no lock, no model); maps the working tree as it is. */
async function printRepoMap(cli: CliContext, command: Extract<CliCommand, { name: "map" }>): Promise<number> {
  let checkout: Checkout;
  try {
    checkout = await findCheckout(cli.cwd);
  } catch (error) {
    if (!(error instanceof CliError)) throw error;
    cli.stderr(`blueprint: ${error.message}`);
    return EXIT.failed;
  }
  const map = await buildRepoMap(checkout.root, { focus: command.focus, tokens: command.tokens });
  cli.stdout(map.text);
  return EXIT.ok;
}

type JobCommand = Exclude<CliCommand, { name: "help" | "version" | "map" }>;

async function runCommand(
  cli: CliContext,
  args: CliArgs,
  command: JobCommand,
  checkout: Checkout,
  store: ThreadStore,
): Promise<number> {
  // 3. The thread the command belongs to.
  const current = await store.current();
  if (command.name === "status") {
    printStatus(cli.stdout, current, store, args.markdown);
    return EXIT.ok;
  }

  // 4. The engine, configured like the App's, with the model and limits from flags or the environment;
  // checked before a new thread is made, so a refused command leaves nothing behind.
  const engineEnv = cliEngineEnv(cli, args, command, store);
  const thread = command.name === "plan" ? await threadForPlan(cli, store, current, checkout, command) : current;
  if (!thread) throw new CliError('there is no plan yet. Run `blueprint plan "what you want done"` first.');
  if (checkout.dirty)
    cli.stderr(
      `note: uncommitted changes are not seen; Blueprint works on the committed state of \`${thread.baseBranch}\`.`,
    );
  const engine = createWorkflowDeps(engineEnv, cliLogger(cli.stderr, args.verbose));
  // Your machine, your call (docs/cli.md): without bubblewrap the CLI goes on, but never without saying so.
  if (engine.runner.isolation === "plain")
    cli.stderr(
      "note: the agent's commands run WITHOUT a sandbox here (no working bubblewrap, or BLUEPRINT_SANDBOX=none): as you, with a scrubbed environment, a timeout and an output cap. Install bubblewrap (Linux), or set BLUEPRINT_SANDBOX=bwrap to refuse instead.",
    );
  // A retried model request is printed the moment it starts, while planning and while building.
  const deps: WorkflowDeps = {
    ...engine,
    modelFor: (config, onRetry) =>
      engine.modelFor(config, (retry) => {
        cli.stderr(modelRetryLine(retry));
        onRetry?.(retry);
      }),
  };

  // 5. The command as a comment on the thread; progress as it goes.
  const local = createLocalThread(checkout, store, thread, progressPrinter(cli.stderr, store.seal(thread.number)));
  let interrupted = false;
  const { outcome, jobErrors } = await runComment(
    deps,
    local,
    { body: commentFor(command), actor: thread.requestedBy },
    (stop) =>
      cli.onInterrupt(() => {
        interrupted = true;
        cli.stderr("Stopping at the next safe point… (Ctrl-C again quits at once)");
        stop();
      }),
  );

  // 6. The result, and an exit status a script can rely on.
  printOutcome(cli.stdout, outcome, { markdown: args.markdown, pullRequestFile: local.pullRequestFile });
  for (const error of jobErrors) cli.stderr(`blueprint: ${error}`);
  if (interrupted) return EXIT.interrupted;
  if (!outcome.changed && outcome.replies.length === 0)
    cli.stderr("blueprint: nothing happened: Blueprint was not waiting for that on this plan.");
  const status = outcome.latest?.state.status;
  // A follow-up that stopped leaves the plan built: its own status says how it ended.
  const followUp = outcome.latest?.state.followUp?.status;
  const stopped =
    status === "failed" ||
    (status === "cancelled" && command.name !== "cancel") ||
    (command.name === "fix" && followUp !== "built");
  return outcome.changed && !stopped && jobErrors.length === 0 ? EXIT.ok : EXIT.failed;
}

/** The engine's environment: the App's settings, with the model and limits from flags, and the checkout's own secret. */
function cliEngineEnv(cli: CliContext, args: CliArgs, command: JobCommand, store: ThreadStore): BlueprintEnv {
  const engineEnv = loadEnv({
    BLUEPRINT_PROGRESS_INTERVAL_MS: "0",
    // Your own machine, your own command: bubblewrap when it works (Linux), else a warning (docs/security.md, "The
    // sandbox").
    BLUEPRINT_SANDBOX: "auto",
    ...cli.env,
    ...args.limits,
    ...(args.model.baseUrl ? { OPENAI_BASE_URL: args.model.baseUrl } : {}),
    ...(args.model.apiKey ? { OPENAI_API_KEY: args.model.apiKey } : {}),
    ...(args.model.model ? { BLUEPRINT_MODEL: args.model.model } : {}),
    BLUEPRINT_STATE_SECRET: store.stateSecret(),
  });
  if (command.name !== "cancel" && !engineEnv.OPENAI_API_KEY && !engineEnv.OPENAI_BASE_URL) {
    throw new CliError(
      "no model endpoint: set OPENAI_API_KEY (or --api-key), or --base-url / OPENAI_BASE_URL for a local OpenAI-compatible server.",
    );
  }
  return engineEnv;
}

/** `plan` revises the current thread, or starts a new one when there is none, it is built, or `--new` says so. */
async function threadForPlan(
  cli: CliContext,
  store: ThreadStore,
  current: StoredThread | null,
  checkout: Checkout,
  command: { instructions: string; newThread: boolean },
): Promise<StoredThread> {
  const lookup = current ? storedThreadState(current, store.seal(current.number)) : null;
  const built = lookup?.kind === "found" && lookup.latest.state.status === "built";
  if (current && !command.newThread && !built) {
    if (checkout.branch && checkout.branch !== current.baseBranch)
      cli.stderr(
        `note: this plan is for branch \`${current.baseBranch}\`, where it was started; \`blueprint plan --new\` starts one on \`${checkout.branch}\`.`,
      );
    return current;
  }
  if (!checkout.branch)
    throw new CliError(
      "HEAD is detached. Check out the branch the work should start from, then run `blueprint plan` again.",
    );
  const title = command.instructions.split("\n")[0]?.trim().slice(0, 120) || `Work on ${checkout.branch}`;
  return store.create(title, checkout.branch, localUser());
}

function commentFor(command: Exclude<JobCommand, { name: "status" }>): string {
  switch (command.name) {
    case "plan":
      return `/plan ${command.instructions}`.trim();
    case "build":
      return ["/build", ...command.args].join(" ");
    case "revise":
      return `/revise ${command.feedback}`;
    case "fix":
      return `/fix ${command.notes}`;
    case "answer":
      return command.text;
    case "cancel":
      return "/cancel";
  }
}

function localUser(): string {
  try {
    return os.userInfo().username || "you";
  } catch {
    return "you";
  }
}

function cliLogger(write: (text: string) => void, verbose: boolean): Logger {
  const line = (level: string) => (object: object, message?: string) => {
    if (!verbose) return;
    const cause = (object as { err?: unknown }).err;
    write(`[${level}] ${message ?? ""}${cause instanceof Error ? `: ${cause.message}` : ""}`);
  };
  return { info: line("info"), warn: line("warn"), error: line("error") };
}
