import v8 from "node:v8";
import type { ApplicationFunctionOptions, Probot } from "probot";
import { loadEnv, workdirLimitBytes, type BlueprintEnv } from "../config/env.js";
import { intakeTokens } from "../credentials/intake.js";
import { SHUTDOWN_REASON, type JobBackend } from "../jobs/backend.js";
import { HANDLED_EVENTS, REMOVAL_EVENTS } from "../jobs/from-webhook.js";
import { JobMetrics } from "../jobs/metrics.js";
import { serveOperatorPages } from "../jobs/operator-pages.js";
import { stopOnSignal } from "../jobs/stop-on-signal.js";
import { readDiskUse } from "../shared/disk-usage.js";
import { createWorkflowDeps } from "./create-deps.js";
import type { WorkflowDeps } from "../workflow/deps.js";
import { requireSandboxOrExit } from "./sandbox-choice.js";
import { chooseBackend, type JobsWhere } from "./backends.js";
import { answerWebhooksDirectly, webhookAcceptor, webhookReceiver } from "./webhook-route.js";

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
export function createBlueprintApp(
  app: Probot,
  options: ApplicationFunctionOptions,
  overrides: { env?: BlueprintEnv; deps?: Partial<WorkflowDeps>; jobs?: JobsWhere } = {},
): BlueprintApp {
  const env = overrides.env ?? loadEnv();
  const metrics = new JobMetrics();
  const deps = (): WorkflowDeps => ({ ...createWorkflowDeps(env, app.log), ...overrides.deps });
  // Intake mints each job's token (narrowed to its repository) with the App's key; workers never hold the key.
  const tokens = intakeTokens(app, env);

  const { backend, forkedWorker } = chooseBackend({
    app,
    env,
    metrics,
    tokens,
    deps,
    jobs: overrides.jobs ?? "in-process",
  });

  const accept = webhookAcceptor(
    app,
    env,
    backend,
    metrics,
    Boolean(env.REDIS_URL) || overrides.jobs === "local-worker",
  );
  // Deliveries handed to Probot itself (`probot.receive`).
  const receive = webhookReceiver(backend, metrics, accept);
  app.on([...HANDLED_EVENTS, ...REMOVAL_EVENTS], (context) =>
    receive({ id: context.id, name: context.name, payload: context.payload }),
  );
  answerWebhooksDirectly(app, receive);

  serveOperatorPages(options.addHandler, backend, metrics, () =>
    readDiskUse(env.BLUEPRINT_WORKDIR, workdirLimitBytes(env)),
  );

  return {
    backend,
    metrics,
    idle: () => backend.idle(),
    shutdown: async (timeoutMs) => {
      await Promise.all([backend.shutdown(SHUTDOWN_REASON, timeoutMs), forkedWorker?.stop(timeoutMs)]);
    },
  };
}
