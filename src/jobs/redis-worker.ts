import { DelayedError, WaitingError, Worker, type Job as BullJob } from "bullmq";
import { Redis } from "ioredis";
import type { JobToken, RenewToken, Sealer } from "../credentials/index.js";
import { TokenRefresher } from "../credentials/redis.js";
import type { TokenPorts } from "../github/token-port.js";
import { handOverTaken } from "../shared/hand-over.js";
import type { WorkflowDeps } from "../workflow/deps.js";
import { PermissionUnknown } from "../workflow/run-job.js";
import type { QueueStats } from "./backend.js";
import { jobLabel, threadOf, type Job, type Removal } from "./job.js";
import { TRIAGE_QUEUE, verifiedRemoval, WORK_QUEUE } from "./job-wire.js";
import { telemetryFor, type JobMetrics } from "./metrics.js";
import { onlyOnce, RemovalsHeard } from "./redis-replays.js";
import { JobRuntime, removeRepositoryFiles } from "./runtime.js";
import { RedisStore, type HeldThread } from "./store/redis.js";
import {
  dropToken,
  droppingToken,
  heldToken,
  liveToken,
  withFreshToken,
  type Ready,
  type Running,
  type TokenKeeper,
} from "./redis-worker-tokens.js";

/** How soon a job whose thread is busy looks again. */
const BUSY_RETRY_MS = 500;
/**
 * Acknowledgements are a few GitHub calls each, mostly waiting for GitHub's pacing of one
 * installation's writes: many at once, so one busy installation's 👀 never hold back another's.
 */
const TRIAGE_CONCURRENCY = 200;

/** Lane work run in a job runner (JobRunner.run): resolves when the use case returns. */
export type RunWork = (job: Job, token: JobToken, signal: AbortSignal, renew?: RenewToken) => Promise<void>;

export interface RedisWorkersOptions {
  redisUrl: string;
  deps: WorkflowDeps;
  ports: TokenPorts;
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

/** What this worker's processors share. */
interface Context extends TokenKeeper {
  runtime: JobRuntime;
  store: RedisStore;
  ports: TokenPorts;
  metrics: JobMetrics;
  lockMs: number;
  runWork: RunWork | undefined;
}

/**
 * This process's workers on the shared queues: the job runtime (runtime.ts) over the Redis store,
 * triage (👀, permission, quick answers) and lane work taken from BullMQ; each job's token kept and
 * renewed in redis-worker-tokens.ts.
 */
export async function startRedisWorkers(options: RedisWorkersOptions): Promise<RedisWorkers> {
  const { sealer, lockMs, concurrency } = options;
  const connection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  const subscriber = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  const store = new RedisStore({ connection, sealer, concurrency });
  // The engine reports model tokens and step durations through `telemetry`, for /metrics.
  const runtime = new JobRuntime(store, options.metrics, { ...options.deps, telemetry: telemetryFor(options.metrics) });
  const { log } = runtime.deps;
  const refresher = await TokenRefresher.start(options.redisUrl, connection, sealer);
  // A /cancel on any intake or worker reaches the worker running the job; an uninstall reaches every worker.
  await subscriber.subscribe(RedisStore.CANCEL_CHANNEL, RedisStore.REMOVE_CHANNEL);
  const removals = new RemovalsHeard();
  subscriber.on("message", (channel: string, message: string) => {
    if (channel === RedisStore.REMOVE_CHANNEL)
      void hearRemoval(runtime, sealer, message, removals, options.removeFiles);
    else runtime.stop(message, "cancelled with /cancel");
  });
  // Lane work in this process: trees an earlier process left go, and the work directory's bound is checked, before the
  // first job.
  if (!options.runWork) void runtime.deps.workdir?.start();

  const ctx: Context = {
    runtime,
    store,
    log,
    sealer,
    refresher,
    ports: options.ports,
    metrics: options.metrics,
    lockMs,
    runWork: options.runWork,
  };
  // A job that ran to its end does not run again, put back in its queue (redis-replays.ts).
  const triage = new Worker(
    TRIAGE_QUEUE,
    droppingToken(log, TRIAGE_QUEUE, onlyOnce(store, log, triageProcessor(ctx))),
    {
      connection,
      concurrency: TRIAGE_CONCURRENCY,
      lockDuration: lockMs,
      stalledInterval: lockMs,
    },
  );
  const work = new Worker(WORK_QUEUE, droppingToken(log, WORK_QUEUE, onlyOnce(store, log, workProcessor(ctx))), {
    connection,
    concurrency,
    lockDuration: lockMs,
    stalledInterval: lockMs,
    maxStalledCount: 2,
  });
  removingReleased(triage, log);
  for (const worker of [triage, work]) {
    worker.on("error", (error) => log.error({ err: error }, "queue worker error"));
    // A job failed by BullMQ itself (its workers kept dying under it) never reached `droppingToken`.
    worker.on("failed", (bullJob) => void (bullJob && dropToken(log, bullJob)));
  }

  return {
    running: () => runtime.runningCount,
    stats: async () => ({
      backend: "redis",
      waiting: 0,
      running: runtime.runningCount,
      workers: 1,
      concurrency,
      ready: true,
    }),
    async close() {
      runtime.handOverAll();
      await Promise.all([triage.close(), work.close()]);
      await Promise.all([store.close(), refresher.close()]);
      subscriber.disconnect();
      // Left silent: this worker is done with Redis, and a connection that cannot say goodbye goes with the process.
      await connection.quit().catch(() => undefined);
    },
  };
}

/**
 * A removal an intake published (RedisStore `recordRemoval`), heard by this worker: its running jobs
 * of those repositories stop at their next safe point, and their files go from this worker's work
 * directory (a running job's once it ends). A message no intake signed is ignored, logged; one heard before, or
 * published again long after, is a no-op.
 */
async function hearRemoval(
  runtime: JobRuntime,
  sealer: Sealer,
  message: string,
  removals: RemovalsHeard,
  removeFiles: ((removal: Removal) => void) | undefined,
): Promise<void> {
  const { log } = runtime.deps;
  const removal = verifiedRemoval(sealer, message);
  if (!removal) return log.error({}, "ignored a removal in Redis that no intake signed");
  if (!removals.first(removal))
    return log.warn(
      { deliveryId: removal.deliveryId },
      "ignored a removal in Redis heard before: it was published again",
    );
  runtime.stopCovered(removal);
  if (removeFiles) removeFiles(removal);
  else await removeRepositoryFiles(runtime.deps, removal);
}

/**
 * A triage that released its claim ("again": the actor's permission could not be read) leaves no job behind: GitHub's
 * redelivery comes under the same id, which BullMQ would not add while it holds the completed one.
 */
function removingReleased(triage: Worker, log: WorkflowDeps["log"]): void {
  triage.on("completed", (bullJob, result) => {
    if (result === "again")
      void bullJob
        .remove()
        .catch((error: unknown) =>
          log.warn({ err: error, jobId: bullJob.id }, "could not remove a triage job whose claim was released"),
        );
  });
}

/**
 * Triage: the runtime's, with the job's token unsealed; lane work goes to the work queue with its sealed token.
 * "again": the actor's permission could not be read, and the claim was released for GitHub's redelivery.
 */
function triageProcessor(ctx: Context) {
  return async (bullJob: BullJob, running: Running): Promise<void | "again"> => {
    const wire = await withFreshToken(ctx, bullJob, running);
    const { error } = await ctx.runtime.triage(
      wire.job,
      { keys: wire.keys, sealedToken: wire.sealedToken },
      ctx.ports.portsFor(wire.job, heldToken(ctx, wire)),
    );
    return error instanceof PermissionUnknown ? "again" : undefined;
  };
}

/** Lane work: one job per thread across every worker, resumable by another worker if this one stops. */
function workProcessor(ctx: Context) {
  return async (bullJob: BullJob, running: Running): Promise<void> => {
    const { store, log } = ctx;
    const wire = await withFreshToken(ctx, bullJob, running);
    const { job } = wire;
    const held: HeldThread = { thread: threadOf(job), workId: running.id, deliveryId: job.deliveryId };
    // 1. One job per thread across every worker: a busy thread sends the job back to wait a little.
    if (!(await store.takeThread(held, ctx.lockMs))) {
      await bullJob.moveToDelayed(Date.now() + BUSY_RETRY_MS, running.lockToken);
      throw new DelayedError();
    }
    const controller = new AbortController();
    const stopKeeping = store.keepThread(held, ctx.lockMs, controller, log);
    let handingOver = false;
    try {
      // 2. Dropped by a /cancel while it waited? Taken over from a worker that died? Then run (again).
      if (!(await startOnThread(ctx, job, held, controller))) return;
      // 3. The runtime's lane work: a build's approval confirmed on GitHub, then the use case.
      const { failed } = await ctx.runtime.work(held.workId, job, controller, workAccess(ctx, bullJob, wire, running));
      // Reported on the thread; failed as a job too (BullMQ keeps it as failed).
      if (failed !== undefined) throw failed;
      // 4. This worker is shutting down: the job goes back to the queue, keeping its thread, and
      //    the next worker to take it resumes it (a `/cancel` meanwhile stops it there).
      handingOver = handOverTaken(controller.signal);
      if (handingOver) await handBack(ctx, bullJob, job, running);
    } finally {
      stopKeeping();
      await store.leaveThread(held, handingOver, log);
    }
  };
}

/**
 * Step 2: false when a /cancel dropped the job while it waited; else it runs (a /cancel that came meanwhile already
 * stops it).
 */
async function startOnThread(ctx: Context, job: Job, held: HeldThread, controller: AbortController): Promise<boolean> {
  const start = await ctx.store.startOnThread(held);
  if (start === "dropped") {
    ctx.metrics.jobs.inc({ kind: job.kind, outcome: "dropped" });
    return false;
  }
  if (start === "resume")
    ctx.log.warn(
      { deliveryId: job.deliveryId, job: jobLabel(job) },
      "taking over a job whose worker stopped; resuming from what was pushed",
    );
  else ctx.log.info({ deliveryId: job.deliveryId, job: jobLabel(job) }, "job started");
  if (await ctx.store.cancelled(held.workId)) controller.abort("cancelled with /cancel");
  return true;
}

/** The job's own token, renewed through the intakes as it works. */
function workAccess(ctx: Context, bullJob: BullJob, wire: Ready, running: Running) {
  const { job } = wire;
  const token = liveToken(ctx, bullJob, wire, running);
  const { runWork } = ctx;
  return {
    ports: async () => ctx.ports.portsFor(job, token.current),
    run: runWork && ((signal: AbortSignal) => runWork(job, token.held, signal, token.renew)),
  };
}

/** Step 4: the job back in the queue at a safe point, for the next worker to resume. */
async function handBack(ctx: Context, bullJob: BullJob, job: Job, running: Running): Promise<never> {
  await bullJob.moveToWait(running.lockToken);
  ctx.log.info({ deliveryId: job.deliveryId, job: jobLabel(job) }, "job handed back to the queue at a safe point");
  throw new WaitingError();
}
