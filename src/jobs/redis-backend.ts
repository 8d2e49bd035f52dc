import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { ConfigError, type BlueprintEnv } from "../config/env.js";
import type { JobTokens } from "../github/job-token.js";
import { tokenPorts } from "../github/token-port.js";
import type { Logger, WorkflowDeps } from "../workflow/deps.js";
import type { JobBackend, QueueStats } from "./backend.js";
import type { Accepted } from "./from-webhook.js";
import type { JobMetrics } from "./metrics.js";
import { RedisLanes } from "./redis-lanes.js";
import { bullId, JOB_OPTIONS, startRedisWorkers, TRIAGE_QUEUE, WORK_QUEUE, type RedisWorkers, type Wire } from "./redis-worker.js";
import { Sealer } from "./sealed.js";

/** The secret intake and workers share to seal job tokens; required with Redis (workers hold no App key to fall back on). */
export function jobSealer(env: BlueprintEnv): Sealer {
  if (!env.BLUEPRINT_STATE_SECRET) {
    throw new ConfigError("REDIS_URL is set, so jobs cross processes: set BLUEPRINT_STATE_SECRET (16+ characters, the same on every intake and worker) so job tokens travel sealed through Redis");
  }
  return new Sealer(env.BLUEPRINT_STATE_SECRET);
}

export interface RedisBackendOptions {
  env: BlueprintEnv;
  redisUrl: string;
  log: Logger;
  metrics: JobMetrics;
  /** Intake's side: mints each job's narrowed token. Absent in a worker-only process. */
  tokens: JobTokens | null;
  /** This process works jobs too (`npm start` unless BLUEPRINT_WORKERS=0, and `npm run worker`). */
  workerDeps: WorkflowDeps | null;
}

/**
 * BullMQ on Redis: any number of intake and worker processes share the queues, the delivery
 * claims, the thread locks and `/cancel`. Intake claims the delivery, mints the job's token, seals
 * it into the job and enqueues it durably before the webhook is answered.
 */
export function startRedisBackend(options: RedisBackendOptions): JobBackend {
  const { env, log } = options;
  const sealer = jobSealer(env);
  const connection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  connection.on("error", (error) => log.warn({ err: error }, "redis connection error"));
  const lanes = new RedisLanes(connection);
  const triage = new Queue(TRIAGE_QUEUE, { connection });
  const work = new Queue(WORK_QUEUE, { connection });
  const workers: Promise<RedisWorkers> | null = options.workerDeps
    ? startRedisWorkers({ redisUrl: options.redisUrl, deps: options.workerDeps, ports: tokenPorts(env, log), sealer, concurrency: env.BLUEPRINT_CONCURRENCY, lockMs: env.BLUEPRINT_JOB_LOCK_MS, metrics: options.metrics })
    : null;
  workers?.catch((error: unknown) => log.error({ err: error }, "the queue workers did not start"));

  const quiet = async () => {
    const counts = await Promise.all([triage.getJobCounts("waiting", "active", "delayed"), work.getJobCounts("waiting", "active", "delayed")]);
    return counts.every((count) => (count.waiting ?? 0) + (count.active ?? 0) + (count.delayed ?? 0) === 0);
  };

  return {
    async submit({ job, keys }: Accepted) {
      if (!(await lanes.claim(keys, job.deliveryId))) return false;
      try {
        if (!options.tokens) throw new Error("this process takes no webhooks (no App key to mint job tokens)");
        const token = await options.tokens.forJob(job);
        const wire: Wire = { job, keys, sealedToken: sealer.seal(JSON.stringify(token)) };
        await triage.add(job.kind, wire, { ...JOB_OPTIONS, jobId: bullId("t", job.deliveryId) });
        return true;
      } catch (error) {
        // Not enqueued: forget the claim, so GitHub's redelivery of this webhook is handled.
        await lanes.release(keys).catch(() => undefined);
        throw error;
      }
    },
    async stats(): Promise<QueueStats> {
      const [t, w, workerCount] = await Promise.all([triage.getJobCounts("waiting", "active", "delayed"), work.getJobCounts("waiting", "active", "delayed"), work.getWorkersCount()]);
      return {
        backend: "redis",
        waiting: (t.waiting ?? 0) + (t.active ?? 0) + (t.delayed ?? 0) + (w.waiting ?? 0) + (w.delayed ?? 0),
        running: w.active ?? 0,
        workers: workerCount,
        concurrency: env.BLUEPRINT_CONCURRENCY,
      };
    },
    async idle() {
      while (!(await quiet())) await new Promise((resolve) => setTimeout(resolve, 50));
    },
    async shutdown(reason, timeoutMs) {
      const closing = (async () => {
        await (await workers)?.close(reason);
        await Promise.all([triage.close(), work.close()]);
        await connection.quit();
      })();
      await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, timeoutMs).unref())]);
    },
  };
}
