import { createPrivateKey } from "node:crypto";
import v8 from "node:v8";
import { getPrivateKey } from "@probot/get-private-key";
import type { ApplicationFunctionOptions, Probot } from "probot";
import { loadEnv, type BlueprintEnv } from "../config/env.js";
import { JobTokens, type JobTokenSource, type TokenMinter } from "../github/job-token.js";
import { MintThread } from "../github/mint-thread.js";
import { githubApiUrl } from "../github/token-port.js";
import { installationOctokit } from "../github/installation-octokit.js";
import { SHUTDOWN_REASON, type JobBackend } from "../jobs/backend.js";
import { deliveryJob, HANDLED_EVENTS } from "../jobs/from-webhook.js";
import { JobMetrics } from "../jobs/metrics.js";
import { serveOperatorPages } from "../jobs/operator-pages.js";
import { stopOnSignal } from "../jobs/stop-on-signal.js";
import { createWorkflowDeps } from "../workflow/create-deps.js";
import type { WorkflowDeps } from "../workflow/deps.js";
import { requireSandboxOrExit } from "../workflow/sandbox-choice.js";
import { chooseBackend, type JobsWhere } from "./backends.js";
import { answerWebhooksDirectly, webhookAcceptor } from "./webhook-route.js";

export interface BlueprintApp {
  backend: JobBackend;
  metrics: JobMetrics;
  /** Resolves when nothing this process accepted or works is left (tests, graceful shutdown). */
  idle(): Promise<void>;
  /** Stops running jobs at their next safe point and waits for them (at most `timeoutMs`). */
  shutdown(timeoutMs: number): Promise<void>;
}

/** The intake as `npm start` runs it (Probot loads src/index.ts): jobs in a forked worker, stopped on a signal. */
export function startIntake(app: Probot, options: ApplicationFunctionOptions): void {
  // The intake's young generation is scavenged on its own thread: in a burst on a busy machine, V8's
  // parallel scavenge waited for helper threads to get a core (11–34 ms pauses against 4–6 ms).
  // Set here, not in npm start's flags, so the workers it forks (big parses, idle cores) keep it.
  v8.setFlagsFromString("--no-parallel-scavenge");
  // Before Probot listens and the worker is forked (`npm start` has checked already; `probot run` straight has not).
  const env = requireSandboxOrExit(loadEnv());
  const { shutdown } = createBlueprintApp(app, options, { jobs: "local-worker", env });
  // Graceful shutdown: running jobs stop at a safe point and leave their state resumable.
  stopOnSignal(app.log, "stopping: asking running jobs to stop at a safe point", () => shutdown(25_000));
}

/**
 * Intake does only intake: Probot verifies the signature; the event becomes a job (plain data, bots
 * filtered); the backend claims its delivery id and enqueues it; the webhook is answered. The 👀,
 * the permission check and everything slow happen in a worker.
 */
export function createBlueprintApp(app: Probot, options: ApplicationFunctionOptions, overrides: { env?: BlueprintEnv; deps?: Partial<WorkflowDeps>; jobs?: JobsWhere } = {}): BlueprintApp {
  const env = overrides.env ?? loadEnv();
  const metrics = new JobMetrics();
  const deps = (): WorkflowDeps => ({ ...createWorkflowDeps(env, app.log), ...overrides.deps });
  // Intake mints each job's token (narrowed to its repository) with the App's key; workers never hold the key.
  // With the key in the App's environment (as `npm start` has it), on a thread of its own, signed with an App
  // token reused for minutes; otherwise (an App handed a Probot instance) through Probot's own authentication.
  const tokens: JobTokenSource = ownMintThread(env, app.log) ?? new JobTokens(async (installationId) => (await installationOctokit(app, installationId, "mint")) as unknown as TokenMinter);

  const { backend, forkedWorker } = chooseBackend({ app, env, metrics, tokens, deps, jobs: overrides.jobs ?? "in-process" });

  const accept = webhookAcceptor(app, env, backend, metrics, Boolean(env.REDIS_URL) || overrides.jobs === "local-worker");
  // Deliveries handed to Probot itself (`probot.receive`).
  app.on(HANDLED_EVENTS, (context) => accept(context.name, deliveryJob({ id: context.id, name: context.name, payload: context.payload })));
  answerWebhooksDirectly(app, accept);

  serveOperatorPages(options.addHandler, backend, metrics);

  return {
    backend,
    metrics,
    idle: () => backend.idle(),
    shutdown: async (timeoutMs) => {
      await Promise.all([backend.shutdown(SHUTDOWN_REASON, timeoutMs), forkedWorker?.stop(timeoutMs)]);
      if (tokens instanceof MintThread) await tokens.close();
    },
  };
}

/** The token thread, minting with the App's key from its environment; null without a usable key. */
function ownMintThread(env: BlueprintEnv, log: Probot["log"]): MintThread | null {
  const privateKey = getPrivateKey({ env: { PRIVATE_KEY: env.PRIVATE_KEY, PRIVATE_KEY_PATH: env.PRIVATE_KEY_PATH } });
  if (!env.APP_ID || !privateKey) return null;
  try {
    // Read here, so a key that does not parse falls back at once rather than failing every mint.
    createPrivateKey(privateKey);
    return new MintThread({ appId: env.APP_ID, privateKey, baseUrl: githubApiUrl(env), log });
  } catch (error) {
    log.warn({ err: error }, "the App's private key could not be read here; job tokens are requested through Probot's authentication");
    return null;
  }
}
