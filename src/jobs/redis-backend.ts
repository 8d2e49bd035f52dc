import type { Queue } from "bullmq";
import { Redis } from "ioredis";
import type { BlueprintEnv } from "../config/env.js";
import { jobSealer, type JobTokenSource } from "../credentials/index.js";
import { answerTokenRequests } from "../credentials/redis.js";
import { tokenPorts } from "./token-ports.js";
import type { Logger } from "../shared/logger.js";
import type { WorkflowDeps } from "../workflow/deps.js";
import type { JobBackend, QueueStats } from "./backend.js";
import type { Accepted } from "./from-webhook.js";
import { TRIAGE_QUEUE, verifiedWire, WORK_QUEUE } from "./job-wire.js";
import type { JobMetrics } from "./metrics.js";
import type { WorkerMetricsSource } from "./operator-pages.js";
import { forgetClaim, MINT_CONCURRENCY, Minting } from "./redis-mint.js";
import { startRedisWorkers, type RedisWorkers } from "./redis-worker.js";
import { RedisStore } from "./store/redis.js";

export interface RedisBackendOptions {
  env: BlueprintEnv;
  redisUrl: string;
  log: Logger;
  metrics: JobMetrics;
  /** Intake's side: mints each job's narrowed token with the App's key. */
  tokens: JobTokenSource;
  /** This process works jobs too (`npm start` unless BLUEPRINT_WORKERS=0, and `npm run worker`). */
  workerDeps: WorkflowDeps | null;
  /** The metrics of a queue worker this process forked (`npm start`), for its `/metrics`. */
  workerMetrics?: () => Promise<unknown>;
}

/**
 * BullMQ on Redis: any number of intake and worker processes share the queues, the delivery
 * claims, the thread locks and `/cancel`. Intake claims the delivery and enqueues it durably, then
 * answers; this intake (or any other, should this one die first) then mints the job's token, seals
 * it into the job and hands it to the workers' triage queue (redis-mint.ts). The token request is
 * never on the webhook's response path.
 */
export function startRedisBackend(options: RedisBackendOptions): JobBackend & Partial<WorkerMetricsSource> {
  const { env, log } = options;
  const sealer = jobSealer(env);
  const connection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  connection.on("error", (error) => log.warn({ err: error }, "redis connection error"));
  const store = new RedisStore({ connection, sealer, concurrency: env.BLUEPRINT_CONCURRENCY });
  const { triageQueue: triage, workQueue: work } = store;
  const minting = new Minting({
    connection,
    store,
    sealer,
    log,
    tokens: options.tokens,
    lockMs: env.BLUEPRINT_JOB_LOCK_MS,
  });
  // Workers hold no App key: a job that waited past its token's life gets a fresh one from an intake.
  const tokenDesk = answerTokenRequests({
    connection,
    tokens: options.tokens,
    sealer,
    log,
    concurrency: MINT_CONCURRENCY,
    maxWallTimeMs: env.BLUEPRINT_MAX_MINUTES * 60_000,
    queues: [TRIAGE_QUEUE, WORK_QUEUE],
    verifiedJob: (place, data) => verifiedWire(sealer, place, data).job,
    runOf: (place, job) => runOf(store, place, job),
  });
  const workers: Promise<RedisWorkers> | null = options.workerDeps
    ? startRedisWorkers({
        redisUrl: options.redisUrl,
        deps: options.workerDeps,
        ports: tokenPorts(env, log),
        sealer,
        concurrency: env.BLUEPRINT_CONCURRENCY,
        lockMs: env.BLUEPRINT_JOB_LOCK_MS,
        metrics: options.metrics,
      })
    : null;
  workers?.catch((error: unknown) => log.error({ err: error }, "the queue workers did not start"));

  const quiet = async () => {
    const counts = await Promise.all([minting.queue, triage, work].map(unfinished));
    return counts.every((count) => count.all === 0);
  };

  return {
    ...(options.workerMetrics ? { workerMetrics: options.workerMetrics } : {}),
    async submit({ job, keys }: Accepted) {
      const claim = await store.claim(keys, job);
      if (!claim) return false;
      try {
        await minting.accept(job, keys, claim.turn);
        return true;
      } catch (error) {
        // Not enqueued: forget the claim, so GitHub's redelivery of this webhook is handled.
        await forgetClaim(store, log, keys, job);
        throw error;
      }
    },
    // Every worker hears it (each keeps its own work directory); waiting jobs find it recorded.
    removeRepositories: (removal) => store.recordRemoval(removal),
    stats: () => queueStats({ mint: minting.queue, triage, work }, env.BLUEPRINT_CONCURRENCY),
    async idle() {
      while (!(await quiet())) await new Promise((resolve) => setTimeout(resolve, 50));
    },
    // Running jobs are not stopped with `reason` here: they go back to the queue for another worker.
    async shutdown(_reason, timeoutMs) {
      const closing = (async () => {
        await Promise.all([minting.close(), tokenDesk.close()]);
        await (await workers)?.close();
        await store.close();
        await connection.quit();
      })();
      await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, timeoutMs).unref())]);
    },
  };
}

/**
 * How a job a token is asked for has run, as the workers recorded it in the store: ended before, and (lane work) when
 * it first started on its thread, signed.
 */
export async function runOf(
  store: RedisStore,
  place: { queue: string; id: string },
  job: { deliveryId: string },
): Promise<{ ended: boolean; startedAt: number | null }> {
  const [ended, startedAt] = await Promise.all([
    store.handled(place.id),
    place.queue === WORK_QUEUE ? store.startedAt(place.id, job.deliveryId) : null,
  ]);
  return { ended, startedAt };
}

/** A queue's jobs not yet done, by state; an intake's and triage's jobs wait in their turn, BullMQ's "prioritized". */
async function unfinished(queue: Queue) {
  const counts = await queue.getJobCounts("waiting", "prioritized", "active", "delayed");
  const waiting = (counts.waiting ?? 0) + (counts.prioritized ?? 0) + (counts.delayed ?? 0);
  return { waiting, active: counts.active ?? 0, all: waiting + (counts.active ?? 0) };
}

/** The queues at /healthz: everything not yet lane work counts as waiting; running is lane work. */
async function queueStats(
  queues: { mint: Queue; triage: Queue; work: Queue },
  concurrency: number,
): Promise<QueueStats> {
  const [m, t, w, workerCount] = await Promise.all([
    unfinished(queues.mint),
    unfinished(queues.triage),
    unfinished(queues.work),
    queues.work.getWorkersCount(),
  ]);
  return {
    backend: "redis",
    waiting: m.all + t.all + w.waiting,
    running: w.active,
    workers: workerCount,
    concurrency,
    ready: true,
  };
}
