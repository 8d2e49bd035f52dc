import http from "node:http";
import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { ConfigError, loadEnv, logLevelOf } from "./config/env.js";
import { answerIntake } from "./jobs/forked-redis-worker.js";
import { JobRunner } from "./jobs/job-runner.js";
import { JobMetrics, telemetryFor } from "./jobs/metrics.js";
import { serveOperatorPages } from "./jobs/operator-pages.js";
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
  const jobRunner = new JobRunner({
    entry: fileURLToPath(new URL("./job-runner.js", import.meta.url)),
    stateKey: stateKeyOf(env).export().toString("base64"),
    log,
    telemetry: telemetryFor(metrics),
  });
  runner = jobRunner;
  workers = await startRedisWorkers({
    redisUrl: env.REDIS_URL,
    deps: createWorkflowDeps(env, log),
    ports: tokenPorts(env, log),
    sealer: jobSealer(env),
    concurrency: env.BLUEPRINT_CONCURRENCY,
    lockMs: env.BLUEPRINT_JOB_LOCK_MS,
    metrics,
    runWork: (job, token, signal, renew) => jobRunner.run(job, token, signal, renew),
  });
  // With PORT set: /healthz (what this worker runs) and /metrics (its jobs), for probes and Prometheus.
  if (env.PORT !== undefined) {
    const handlers: Array<Parameters<Parameters<typeof serveOperatorPages>[0]>[0]> = [];
    serveOperatorPages((handler) => handlers.push(handler), workers, metrics);
    const server = http.createServer((req, res) => void Promise.all(handlers.map((handle) => handle(req, res))).then((handled) => handled.some(Boolean) || res.writeHead(404).end()));
    server.listen(env.PORT, env.HOST);
  }
  log.info({ concurrency: env.BLUEPRINT_CONCURRENCY }, "worker ready: taking jobs from Redis");
  started(undefined);
  if (typeof process.send !== "function") {
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      process.once(signal, () => {
        log.info({ signal }, "stopping: running jobs stop at a safe point and go back to the queue for other workers");
        void stop().finally(() => process.exit(0));
      });
    }
  }
} catch (error) {
  log.error({ err: error }, error instanceof ConfigError ? error.message : "the worker could not start");
  process.exit(1);
}
