import { pino } from "pino";
import { ConfigError, loadEnv, logLevelOf, workdirLimitBytes } from "../config/env.js";
import { readDiskUse } from "../shared/disk-usage.js";
import { tokenPorts } from "../jobs/token-ports.js";
import { answerIntake } from "../jobs/forked-redis-worker.js";
import { JobRunner } from "../jobs/job-runner.js";
import { JobMetrics, telemetryFor } from "../jobs/metrics.js";
import { listenWithOperatorPages } from "../jobs/operator-pages.js";
import { jobSealer } from "../credentials/index.js";
import { startRedisWorkers, type RedisWorkers } from "../jobs/redis-worker.js";
import { stopOnSignal } from "../jobs/stop-on-signal.js";
import { createWorkflowDeps, stateKeyOf } from "./create-deps.js";
import { requireSandboxOrExit } from "./sandbox-choice.js";
import { CHILD_ENTRIES } from "./entries.js";
import "./engine-tables.js";

/**
 * The Redis queue worker (src/worker.ts): takes jobs from Redis with the engine, lane work in a job
 * runner it forks. Run on its own, a signal stops it; forked by an intake, the intake does (over the
 * channel of jobs/forked-redis-worker.ts). Either way running jobs go back to the queue.
 */
export async function startQueueWorker(): Promise<void> {
  const log = pino({ name: "blueprint-worker", level: logLevelOf() });
  const metrics = new JobMetrics();
  let workers: RedisWorkers | undefined;
  let runner: JobRunner | undefined;
  const stop = async () => {
    await workers?.close();
    runner?.stop();
  };
  let started: (value: unknown) => void = () => {};
  // Forked by `npm start`: the channel is heard from the first moment (its "start" may come before we are up).
  if (typeof process.send === "function")
    answerIntake({ started: new Promise((resolve) => (started = resolve)), metrics, stop, log });

  try {
    // Before Redis is reached, anything listens or a job runner is forked: without the sandbox, one message and exit 1.
    const env = requireSandboxOrExit(loadEnv());
    if (!env.REDIS_URL)
      throw new ConfigError("`npm run worker` takes its jobs from Redis: set REDIS_URL (the same as the intake's)");
    if (env.PRIVATE_KEY || env.WEBHOOK_SECRET)
      log.warn({}, "a worker needs neither PRIVATE_KEY nor WEBHOOK_SECRET; remove them from its environment");
    const jobRunner = (runner = new JobRunner({
      entry: CHILD_ENTRIES.jobRunner,
      stateKey: stateKeyOf(env).export().toString("base64"),
      log,
      telemetry: telemetryFor(metrics),
    }));
    workers = await startRedisWorkers({
      redisUrl: env.REDIS_URL,
      deps: createWorkflowDeps(env, log),
      ports: tokenPorts(env, log),
      sealer: jobSealer(env),
      concurrency: env.BLUEPRINT_CONCURRENCY,
      lockMs: env.BLUEPRINT_JOB_LOCK_MS,
      metrics,
      runWork: (job, token, signal, renew) => jobRunner.run(job, token, signal, renew),
      removeFiles: (removal) => jobRunner.removeRepositories(removal),
    });
    // With PORT set: /healthz (what this worker runs) and /metrics (its jobs), for probes and Prometheus.
    if (env.PORT !== undefined)
      listenWithOperatorPages(env.PORT, env.HOST, workers, metrics, () =>
        readDiskUse(env.BLUEPRINT_WORKDIR, workdirLimitBytes(env)),
      );
    log.info({ concurrency: env.BLUEPRINT_CONCURRENCY }, "worker ready: taking jobs from Redis");
    started(undefined);
    // Run on its own (not forked by `npm start`): a signal stops it, running jobs going back to the queue.
    if (typeof process.send !== "function")
      stopOnSignal(log, "stopping: running jobs stop at a safe point and go back to the queue for other workers", stop);
  } catch (error) {
    log.error({ err: error }, error instanceof ConfigError ? error.message : "the worker could not start");
    process.exit(1);
  }
}
