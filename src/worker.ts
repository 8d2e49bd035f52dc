import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { ConfigError, loadEnv, logLevelOf, workdirLimitBytes } from "./config/env.js";
import { readDiskUse } from "./shared/disk-usage.js";
import { answerIntake } from "./jobs/forked-redis-worker.js";
import { stopOnSignal } from "./jobs/stop-on-signal.js";
import { JobRunner } from "./jobs/job-runner.js";
import { JobMetrics, telemetryFor } from "./jobs/metrics.js";
import { listenWithOperatorPages } from "./jobs/operator-pages.js";
import { tokenPorts } from "./github/token-port.js";
import { jobSealer } from "./jobs/redis-backend.js";
import { startRedisWorkers, type RedisWorkers } from "./jobs/redis-worker.js";
import { createWorkflowDeps, stateKeyOf } from "./workflow/create-deps.js";
import { requireSandboxOrExit } from "./workflow/sandbox-choice.js";

/**
 * `npm run worker`: works jobs from the Redis queue, with no webhook server and no App key — each
 * job brings an installation token narrowed to its repository, sealed with BLUEPRINT_STATE_SECRET.
 * Triage (👀, permission, quick answers) runs here; lane work in a job runner it forks at a lower CPU
 * priority, so a job's git and prompt building never hold back an acknowledgement. `npm start` with
 * Redis forks one too, over an IPC channel (src/jobs/forked-redis-worker.ts). Wiring only.
 */
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
if (typeof process.send === "function") answerIntake({ started: new Promise((resolve) => (started = resolve)), metrics, stop });

try {
  // Before Redis is reached, anything listens or a job runner is forked: without the sandbox, one message and exit 1.
  const env = requireSandboxOrExit(loadEnv());
  if (!env.REDIS_URL) throw new ConfigError("`npm run worker` takes its jobs from Redis: set REDIS_URL (the same as the intake's)");
  if (env.PRIVATE_KEY || env.WEBHOOK_SECRET) log.warn({}, "a worker needs neither PRIVATE_KEY nor WEBHOOK_SECRET; remove them from its environment");
  const entry = fileURLToPath(new URL("./job-runner.js", import.meta.url));
  const jobRunner = (runner = new JobRunner({ entry, stateKey: stateKeyOf(env).export().toString("base64"), log, telemetry: telemetryFor(metrics) }));
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
  if (env.PORT !== undefined) listenWithOperatorPages(env.PORT, env.HOST, workers, metrics, () => readDiskUse(env.BLUEPRINT_WORKDIR, workdirLimitBytes(env)));
  log.info({ concurrency: env.BLUEPRINT_CONCURRENCY }, "worker ready: taking jobs from Redis");
  started(undefined);
  // Run on its own (not forked by `npm start`): a signal stops it, running jobs going back to the queue.
  if (typeof process.send !== "function") stopOnSignal(log, "stopping: running jobs stop at a safe point and go back to the queue for other workers", stop);
} catch (error) {
  log.error({ err: error }, error instanceof ConfigError ? error.message : "the worker could not start");
  process.exit(1);
}
