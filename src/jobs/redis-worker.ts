import { Queue, Worker } from "bullmq";
import { Redis } from "ioredis";
import type { Sealer } from "../credentials/index.js";
import { TokenRefresher } from "../credentials/redis.js";
import { TRIAGE_QUEUE, WORK_QUEUE } from "./job-wire.js";
import type { QueueStats } from "./backend.js";
import { telemetryFor, type JobMetrics } from "./metrics.js";
import { PermissionCache } from "./permission-cache.js";
import { lastingFor } from "../shared/lasting.js";
import { RedisLanes } from "./redis-lanes.js";
import { handOverAll, triageProcessor, workProcessor } from "./redis-work.js";
import { hearRemoval } from "./redis-removal.js";
import type { Removal } from "./job.js";
import type { RedisWorkerContext, RunWork } from "./redis-worker-context.js";
import { dropToken, droppingToken } from "./redis-worker-tokens.js";

/**
 * How long a count of the work queue's workers is reused: BullMQ counts them by parsing Redis's CLIENT
 * LIST, every client of the Redis, and asked at every enqueue that took 0.46 ms of a worker's CPU each
 * with 36 clients (against 0.1 ms for the active count beside it). Workers come and go in minutes.
 */
const WORKERS_COUNT_MS = 5_000;

/**
 * Acknowledgements are a few GitHub calls each, mostly waiting for GitHub's pacing of one
 * installation's writes: many at once, so one busy installation's 👀 never hold back another's.
 */
const TRIAGE_CONCURRENCY = 200;

export interface RedisWorkersOptions {
  redisUrl: string;
  deps: RedisWorkerContext["deps"];
  ports: RedisWorkerContext["ports"];
  sealer: Sealer;
  concurrency: number;
  lockMs: number;
  metrics: JobMetrics;
  /**
   * Where lane work runs when not in this process (a job runner forked at a lower CPU priority, as
   * `npm run worker` has it): resolves when the use case returns. Triage stays here either way.
   */
  runWork?: RunWork;
  /** With `runWork`: where a removal's files go (the job runner's work directory). */
  removeFiles?: (removal: Removal) => void;
}

export interface RedisWorkers {
  running(): number;
  /** This worker process at /healthz: what it runs now. */
  stats(): Promise<QueueStats>;
  /**
   * Stops taking jobs; asks running ones to stop at their next safe point and puts them back in the
   * queue, where another worker (or the next one to start) resumes them from what was pushed.
   */
  close(): Promise<void>;
}

/**
 * This process's workers on the shared queues: triage (👀, permission, quick answers) and lane work
 * (src/jobs/redis-work.ts); each job's token kept and renewed in src/jobs/redis-worker-tokens.ts.
 */
export async function startRedisWorkers(options: RedisWorkersOptions): Promise<RedisWorkers> {
  const { metrics, sealer, lockMs } = options;
  // The engine reports model tokens and step durations through WorkflowDeps' `telemetry`.
  const deps: RedisWorkerContext["deps"] = { ...options.deps, telemetry: telemetryFor(metrics) };
  const log = deps.log;
  const connection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  const subscriber = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  const workQueue = new Queue(WORK_QUEUE, { connection });
  const controllers = new Map<string, AbortController>();
  let stopping = false;
  const refresher = await TokenRefresher.start(options.redisUrl, connection, sealer);
  // A /cancel on any intake or worker reaches the worker running the job; an uninstall reaches every worker.
  await subscriber.subscribe(RedisLanes.CANCEL_CHANNEL, RedisLanes.REMOVE_CHANNEL);
  const hearing = { deps, sealer, workQueue, controllers, removeFiles: options.removeFiles };
  subscriber.on("message", (channel: string, message: string) => {
    if (channel === RedisLanes.REMOVE_CHANNEL) void hearRemoval(hearing, message);
    else controllers.get(message)?.abort("cancelled with /cancel");
  });
  // Lane work in this process: trees an earlier process left go, and the work directory's bound is checked, before the first job.
  if (!options.runWork) void deps.workdir?.start();

  const ctx: RedisWorkerContext = {
    deps,
    log,
    sealer,
    refresher,
    metrics,
    lockMs,
    controllers,
    workQueue,
    workQueueWorkers: lastingFor(WORKERS_COUNT_MS, () => workQueue.getWorkersCount()),
    ports: options.ports,
    concurrency: options.concurrency,
    lanes: new RedisLanes(connection),
    permissions: new PermissionCache(),
    stopping: () => stopping,
    runWork: options.runWork,
  };
  const triage = new Worker(TRIAGE_QUEUE, droppingToken(log, TRIAGE_QUEUE, triageProcessor(ctx)), { connection, concurrency: TRIAGE_CONCURRENCY, lockDuration: lockMs, stalledInterval: lockMs });
  const work = new Worker(WORK_QUEUE, droppingToken(log, WORK_QUEUE, workProcessor(ctx)), { connection, concurrency: options.concurrency, lockDuration: lockMs, stalledInterval: lockMs, maxStalledCount: 2 });
  for (const worker of [triage, work]) {
    worker.on("error", (error) => log.error({ err: error }, "queue worker error"));
    // A job failed by BullMQ itself (its workers kept dying under it) never reached `droppingToken`.
    worker.on("failed", (bullJob) => void (bullJob && dropToken(log, bullJob)));
  }

  return {
    running: () => controllers.size,
    stats: async () => ({ backend: "redis", waiting: 0, running: controllers.size, workers: 1, concurrency: options.concurrency, ready: true }),
    async close() {
      stopping = true;
      handOverAll(controllers);
      await Promise.all([triage.close(), work.close()]);
      await Promise.all([workQueue.close(), refresher.close()]);
      subscriber.disconnect();
      // Left silent: this worker is done with Redis, and a connection that cannot say goodbye goes with the process.
      await connection.quit().catch(() => undefined);
    },
  };
}
