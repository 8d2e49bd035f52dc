import { createPrivateKey } from "node:crypto";
import { fileURLToPath } from "node:url";
import v8 from "node:v8";
import type { ApplicationFunctionOptions, Probot } from "probot";
import { loadEnv, workdirLimitBytes, type BlueprintEnv } from "./config/env.js";
import { readDiskUse } from "./shared/disk-usage.js";
import { getPrivateKey } from "@probot/get-private-key";
import { JobTokens, type JobTokenSource, type TokenMinter } from "./github/job-token.js";
import { MintThread } from "./github/mint-thread.js";
import { githubApiUrl } from "./github/token-port.js";
import { cloneUrlOnHost, githubWebUrl } from "./github/github-host.js";
import { createOctokitPort } from "./github/octokit-port.js";
import { installationOctokit } from "./github/installation-octokit.js";
import { ownCommentMatcher } from "./github/own-comment.js";
import { SHUTDOWN_REASON, type JobBackend } from "./jobs/backend.js";
import { EmbeddedBackend } from "./jobs/embedded.js";
import { deliveryJob, deliveryRemoval, HANDLED_EVENTS, REMOVAL_EVENTS, type Accepted } from "./jobs/from-webhook.js";
import { webhookIntake } from "./github/webhook-intake.js";
import { ForkedRedisWorker } from "./jobs/forked-redis-worker.js";
import { stopOnSignal } from "./jobs/stop-on-signal.js";
import { JobMetrics } from "./jobs/metrics.js";
import { startRedisBackend } from "./jobs/redis-backend.js";
import { LocalWorkerBackend, withoutIntakeSecrets } from "./jobs/local-worker.js";
import { serveOperatorPages, type WorkerMetricsSource } from "./jobs/operator-pages.js";
import { createWorkflowDeps, stateKeyOf } from "./workflow/create-deps.js";
import { requireSandboxOrExit } from "./workflow/sandbox-choice.js";
import type { WorkflowDeps } from "./workflow/deps.js";

export interface BlueprintApp {
  backend: JobBackend;
  metrics: JobMetrics;
  /** Resolves when nothing this process accepted or works is left (tests, graceful shutdown). */
  idle(): Promise<void>;
  /** Stops running jobs at their next safe point and waits for them (at most `timeoutMs`). */
  shutdown(timeoutMs: number): Promise<void>;
}

/** The Probot app: maps webhook events to use cases. Wiring only. */
export default function blueprint(app: Probot, options: ApplicationFunctionOptions): void {
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
export function createBlueprintApp(
  app: Probot,
  options: ApplicationFunctionOptions,
  overrides: {
    env?: BlueprintEnv;
    deps?: Partial<WorkflowDeps>;
    /**
     * Without Redis, where jobs run: a forked local worker (`npm start`), or this process (tests
     * that replace parts of the engine, which cannot cross into another process).
     */
    jobs?: "local-worker" | "in-process";
  } = {},
): BlueprintApp {
  const env = overrides.env ?? loadEnv();
  const metrics = new JobMetrics();
  const deps = (): WorkflowDeps => ({ ...createWorkflowDeps(env, app.log), ...overrides.deps });
  // Intake mints each job's token (narrowed to its repository) with the App's key; workers never hold the key.
  // With the key in the App's environment (as `npm start` has it), on a thread of its own, signed with an App
  // token reused for minutes; otherwise (an App handed a Probot instance) through Probot's own authentication.
  const tokens: JobTokenSource = ownMintThread(env, app.log) ?? new JobTokens(async (installationId) => (await installationOctokit(app, installationId, "mint")) as unknown as TokenMinter);

  const { backend, forkedWorker } = chooseBackend({ app, env, metrics, tokens, deps, jobs: overrides.jobs ?? "in-process" });

  const accept = webhookAcceptor(app, env, backend, metrics, Boolean(env.REDIS_URL) || overrides.jobs === "local-worker");
  // An uninstall or repositories removed: no job (no token to mint), straight to the backend.
  const receive = async (delivery: { id: string; name: string; payload: unknown }): Promise<void> => {
    const removal = deliveryRemoval(delivery);
    if (!removal) return accept(delivery.name, deliveryJob(delivery));
    metrics.webhooks.inc({ event: delivery.name, outcome: "accepted" });
    await backend.removeRepositories(removal);
  };
  // Deliveries handed to Probot itself (`probot.receive`).
  app.on([...HANDLED_EVENTS, ...REMOVAL_EVENTS], (context) => receive({ id: context.id, name: context.name, payload: context.payload }));
  answerWebhooksDirectly(app, receive);

  serveOperatorPages(options.addHandler, backend, metrics, () => readDiskUse(env.BLUEPRINT_WORKDIR, workdirLimitBytes(env)));

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

/** The forked queue worker's environment: without the intake's secrets, and without PORT (it serves no pages of its own). */
function queueWorkerEnvironment(): NodeJS.ProcessEnv {
  const env = withoutIntakeSecrets(process.env);
  delete env.PORT;
  return env;
}

/**
 * Where jobs run. With Redis: BullMQ, shared by every intake and worker; `npm start` that also works
 * jobs forks a queue worker (`npm run worker`'s code, with its own job runner), so triage never runs on
 * the intake's event loop and neither holds the intake's secrets. Without Redis: a forked local worker
 * (`npm start`), or this process (tests that replace parts of the engine).
 */
function chooseBackend(options: { app: Probot; env: BlueprintEnv; metrics: JobMetrics; tokens: JobTokenSource; deps: () => WorkflowDeps; jobs: "local-worker" | "in-process" }): {
  backend: JobBackend & Partial<WorkerMetricsSource>;
  forkedWorker: ForkedRedisWorker | null;
} {
  const { app, env, metrics, tokens } = options;
  if (env.REDIS_URL) {
    const forkedWorker =
      env.BLUEPRINT_WORKERS > 0 && options.jobs === "local-worker" ? new ForkedRedisWorker({ entry: fileURLToPath(new URL("./worker.js", import.meta.url)), env: queueWorkerEnvironment(), log: app.log }) : null;
    const backend = startRedisBackend({
      env,
      redisUrl: env.REDIS_URL,
      log: app.log,
      metrics,
      tokens,
      workerDeps: env.BLUEPRINT_WORKERS > 0 && !forkedWorker ? options.deps() : null,
      ...(forkedWorker ? { workerMetrics: () => forkedWorker.workerMetrics() } : {}),
    });
    return { backend, forkedWorker };
  }
  if (options.jobs === "local-worker") {
    return { backend: new LocalWorkerBackend({ entry: fileURLToPath(new URL("./local-worker.js", import.meta.url)), tokens, stateKey: stateKeyOf(env).export(), log: app.log }), forkedWorker: null };
  }
  return { backend: inProcessBackend(app, env, options.deps(), metrics), forkedWorker: null };
}

/** One process: the worker uses Probot's installation Octokits, one budget each for acknowledgements, quick answers and jobs. */
function inProcessBackend(app: Probot, env: BlueprintEnv, deps: WorkflowDeps, metrics: JobMetrics): EmbeddedBackend {
  const isOwnComment = ownCommentMatcher({ appId: env.APP_ID, botLogin: env.BLUEPRINT_BOT_NAME });
  return new EmbeddedBackend({
    deps,
    concurrency: env.BLUEPRINT_CONCURRENCY,
    metrics,
    portsFor: async (job) => {
      const port = async (budget: "ack" | "reply" | "work") => createOctokitPort({ octokit: await installationOctokit(app, job.installationId, budget), repo: job.repository, number: job.number, isOwnComment });
      const [ack, reply, work] = await Promise.all([port("ack"), port("reply"), port("work")]);
      return { ack, reply, work };
    },
  });
}

/**
 * An event made a job (or not) goes to the backend, counted. Workers in other processes
 * (`workersDeriveUrls`) clone and push where the configured GitHub says, never where a job says: a
 * webhook whose repository lives elsewhere is refused here, where the reason can be logged.
 */
function webhookAcceptor(app: Probot, env: BlueprintEnv, backend: JobBackend, metrics: JobMetrics, workersDeriveUrls: boolean) {
  const webUrl = githubWebUrl(env);
  return async (event: string, accepted: Accepted | null): Promise<void> => {
    if (!accepted) {
      metrics.webhooks.inc({ event, outcome: "ignored" });
      return;
    }
    if (workersDeriveUrls && !cloneUrlOnHost(webUrl, accepted.job.repository)) {
      app.log.error({ deliveryId: accepted.job.deliveryId, cloneUrl: accepted.job.repository.cloneUrl, githubUrl: webUrl }, "refused a webhook whose repository.clone_url is not on the configured GitHub: set GHE_HOST and GHE_PROTOCOL to the GitHub that sends the webhooks");
      metrics.webhooks.inc({ event, outcome: "refused" });
      return;
    }
    const fresh = await backend.submit(accepted);
    metrics.webhooks.inc({ event, outcome: fresh ? "accepted" : "duplicate" });
  };
}

/**
 * Deliveries over HTTP: Probot's server asks the app for its webhook route, and Blueprint answers it
 * itself (Probot's signature check, then straight to the job), without the Octokit and context Probot
 * makes for every event — about half of the intake's CPU per webhook in a burst.
 * Replaced on the instance because Probot 14 offers no public way to: `Server.start()` always puts
 * `probot.getNodeMiddleware()` first among its handlers (before any `addHandler` one), and neither
 * `ServerOptions` nor `run()` takes another webhook handler.
 */
function answerWebhooksDirectly(app: Probot, receive: (delivery: { id: string; name: string; payload: unknown }) => Promise<void>): void {
  const probotMiddleware = app.getNodeMiddleware.bind(app);
  app.getNodeMiddleware = async (middlewareOptions = {}) =>
    webhookIntake({
      path: middlewareOptions.path ?? app.webhookPath,
      verify: (body, signature) => app.webhooks.verify(body, signature),
      receive,
      fallback: await probotMiddleware(middlewareOptions),
      log: app.log,
    });
}
