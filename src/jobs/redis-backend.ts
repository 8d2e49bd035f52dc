import { Queue, UnrecoverableError, Worker, type Job as BullJob } from "bullmq";
import { Redis } from "ioredis";
import type { BlueprintEnv } from "../config/env.js";
import { jobSealer, sealToken, type JobTokenSource, type Sealer } from "../credentials/index.js";
import { answerTokenRequests } from "../credentials/redis.js";
import { tokenPorts } from "./token-ports.js";
import type { Logger, WorkflowDeps } from "../workflow/deps.js";
import type { JobBackend, QueueStats } from "./backend.js";
import type { Accepted } from "./from-webhook.js";
import { bullId, claimedDeliveryId, JOB_OPTIONS, signRemoval, signWire, TRIAGE_QUEUE, verifiedWire, wireSchema, WORK_QUEUE } from "./job-wire.js";
import type { JobMetrics } from "./metrics.js";
import type { WorkerMetricsSource } from "./operator-pages.js";
import { RedisLanes } from "./redis-lanes.js";
import { startRedisWorkers, type RedisWorkers } from "./redis-worker.js";

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

/** Accepted webhooks waiting for their token: only processes that hold the App's key (intakes) work this queue. */
const MINT_QUEUE = "blueprint-mint";
const MINT_CONCURRENCY = 64;

/**
 * BullMQ on Redis: any number of intake and worker processes share the queues, the delivery
 * claims, the thread locks and `/cancel`. Intake claims the delivery and enqueues it durably, then
 * answers; an intake (this one, or any other should this one die) then mints the job's token, seals
 * it into the job and hands it to the workers' triage queue. The token request is never on the
 * webhook's response path.
 */
export function startRedisBackend(options: RedisBackendOptions): JobBackend & Partial<WorkerMetricsSource> {
  const { env, log } = options;
  const sealer = jobSealer(env);
  const connection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  connection.on("error", (error) => log.warn({ err: error }, "redis connection error"));
  const lanes = new RedisLanes(connection);
  const triage = new Queue(TRIAGE_QUEUE, { connection });
  const work = new Queue(WORK_QUEUE, { connection });
  const mint = new Queue(MINT_QUEUE, { connection });
  const minter = startMinter({ connection, lanes, triage, sealer, log, tokens: options.tokens, lockMs: env.BLUEPRINT_JOB_LOCK_MS });
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
  });
  const workers: Promise<RedisWorkers> | null = options.workerDeps
    ? startRedisWorkers({ redisUrl: options.redisUrl, deps: options.workerDeps, ports: tokenPorts(env, log), sealer, concurrency: env.BLUEPRINT_CONCURRENCY, lockMs: env.BLUEPRINT_JOB_LOCK_MS, metrics: options.metrics })
    : null;
  workers?.catch((error: unknown) => log.error({ err: error }, "the queue workers did not start"));

  const quiet = async () => {
    const counts = await Promise.all([mint, triage, work].map((queue) => queue.getJobCounts("waiting", "active", "delayed")));
    return counts.every((count) => (count.waiting ?? 0) + (count.active ?? 0) + (count.delayed ?? 0) === 0);
  };

  return {
    ...(options.workerMetrics ? { workerMetrics: options.workerMetrics } : {}),
    async submit({ job, keys }: Accepted) {
      if (!(await lanes.claim(keys, job.deliveryId))) return false;
      try {
        const id = bullId("m", job.deliveryId);
        await mint.add(job.kind, signWire(sealer, { queue: MINT_QUEUE, id }, { job, keys }), { ...JOB_OPTIONS, attempts: 5, backoff: { type: "exponential", delay: 1_000 }, jobId: id });
        return true;
      } catch (error) {
        // Not enqueued: forget the claim, so GitHub's redelivery of this webhook is handled.
        await releaseClaim(lanes, log, keys, job.deliveryId);
        throw error;
      }
    },
    // Every worker hears it (each keeps its own work directory); waiting jobs find it recorded.
    removeRepositories: (removal) => lanes.remove(removal, signRemoval(sealer, removal)),
    stats: () => queueStats({ mint, triage, work }, env.BLUEPRINT_CONCURRENCY),
    async idle() {
      while (!(await quiet())) await new Promise((resolve) => setTimeout(resolve, 50));
    },
    // Running jobs are not stopped with `reason` here: they go back to the queue for another worker.
    async shutdown(_reason, timeoutMs) {
      const closing = (async () => {
        await Promise.all([minter.close(), tokenDesk.close()]);
        await (await workers)?.close();
        await Promise.all([mint.close(), triage.close(), work.close()]);
        await connection.quit();
      })();
      await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, timeoutMs).unref())]);
    },
  };
}

/**
 * Intakes' minting worker: each accepted webhook gets its installation token (minted with the App's
 * key, only for a job an intake signed) and goes on to the workers' triage queue.
 */
function startMinter(options: { connection: Redis; lanes: RedisLanes; triage: Queue; sealer: Sealer; log: Logger; tokens: JobTokenSource; lockMs: number }): Worker {
  const { connection, lanes, triage, sealer, log, lockMs } = options;
  const minter = new Worker(
    MINT_QUEUE,
    async (bullJob: BullJob) => {
      const { job, keys } = mintable(sealer, log, bullJob);
      const token = await options.tokens.forJob(job);
      const id = bullId("t", job.deliveryId);
      await triage.add(job.kind, signWire(sealer, { queue: TRIAGE_QUEUE, id }, { job, keys, sealedToken: sealToken(sealer, token, job) }), { ...JOB_OPTIONS, jobId: id });
    },
    { connection, concurrency: MINT_CONCURRENCY, lockDuration: lockMs, stalledInterval: lockMs },
  );
  minter.on("failed", (bullJob, error) => {
    if (!bullJob || bullJob.attemptsMade < (bullJob.opts.attempts ?? 1)) return;
    if (error instanceof UnrecoverableError) return;
    // No token after every retry: forget the claim, so GitHub's redelivery of this webhook is handled.
    const parsed = wireSchema.safeParse(bullJob.data);
    log.error({ err: error, deliveryId: parsed.success ? parsed.data.job.deliveryId : bullJob.id }, "could not get an installation token for a job");
    if (parsed.success) void releaseClaim(lanes, log, parsed.data.keys, parsed.data.job.deliveryId);
  });
  minter.on("error", (error) => log.error({ err: error }, "queue worker error"));
  return minter;
}

/** The accepted webhook, as an intake signed it for the mint queue; a job that does not verify fails at once, logged. */
function mintable(sealer: Sealer, log: Logger, bullJob: BullJob) {
  try {
    return verifiedWire(sealer, { queue: MINT_QUEUE, id: bullJob.id ?? "" }, bullJob.data);
  } catch (error) {
    log.error({ err: error, deliveryId: claimedDeliveryId(bullJob.data) }, "refused a job in Redis that no intake signed: no token minted");
    throw new UnrecoverableError(error instanceof Error ? error.message : String(error));
  }
}

/** Forgets a delivery's claim; if Redis will not, GitHub's redelivery of it is taken for a duplicate until the claim expires: logged. */
async function releaseClaim(lanes: RedisLanes, log: Logger, keys: readonly string[], deliveryId: string): Promise<void> {
  await lanes.release(keys).catch((error: unknown) => log.warn({ err: error, deliveryId }, "could not forget a delivery's claim in Redis; a redelivery of it may be taken for a duplicate"));
}

/** The queues at /healthz: everything not yet lane work counts as waiting; running is lane work. */
async function queueStats(queues: { mint: Queue; triage: Queue; work: Queue }, concurrency: number): Promise<QueueStats> {
  const counts = (queue: Queue) => queue.getJobCounts("waiting", "active", "delayed");
  const [m, t, w, workerCount] = await Promise.all([counts(queues.mint), counts(queues.triage), counts(queues.work), queues.work.getWorkersCount()]);
  const all = (counts: Record<string, number>) => (counts.waiting ?? 0) + (counts.active ?? 0) + (counts.delayed ?? 0);
  return { backend: "redis", waiting: all(m) + all(t) + (w.waiting ?? 0) + (w.delayed ?? 0), running: w.active ?? 0, workers: workerCount, concurrency, ready: true };
}
