import { DelayedError, Queue, UnrecoverableError, WaitingError, Worker, type Job as BullJob } from "bullmq";
import { Redis } from "ioredis";
import { RenewableToken, warnUnrenewed, type JobToken } from "../github/job-token.js";
import type { TokenPorts } from "../github/token-port.js";
import { approvalMismatch, type ApprovingJob } from "../workflow/approval-on-github.js";
import type { WorkflowDeps } from "../workflow/deps.js";
import type { ThreadPort } from "../workflow/ports.js";
import { HandOver, handedOver, handOverTaken } from "../workflow/hand-over.js";
import { PermissionUnknown, reportFailedJob, triageJob, workJob, workerPorts, type ThreadLanes } from "../workflow/run-job.js";
import { jobLabel, threadOf, type Job } from "./job.js";
import { claimedDeliveryId, openToken, QUEUE_LIFE_MS, signWire, TRIAGE_QUEUE, verifiedWire, withoutToken, WORK_QUEUE, type Wire, type WirePlace } from "./job-wire.js";
import type { RenewToken } from "./job-runner.js";
import type { QueueStats } from "./backend.js";
import { telemetryFor, type JobMetrics } from "./metrics.js";
import { PermissionCache } from "./permission-cache.js";
import { RedisLanes } from "./redis-lanes.js";
import type { Sealer } from "./sealed.js";
import { RefreshRefused, TokenRefresher, TokenUnavailable } from "./token-refresh.js";
/**
 * Acknowledgements are a few GitHub calls each, mostly waiting for GitHub's pacing of one
 * installation's writes: many at once, so one busy installation's 👀 never hold back another's.
 */
const TRIAGE_CONCURRENCY = 200;
/** How soon a job whose thread is busy looks again. */
const BUSY_RETRY_MS = 500;
/**
 * How long a job handed back at shutdown keeps its thread: the next worker resumes it before the
 * commands queued behind it (if no worker comes that soon, the lock lapses and the queue moves on).
 */
const HANDED_OVER_HOLD_MS = 10 * 60_000;
/** A job with no fresh token yet (no intake answered) looks again this soon, and is given up after QUEUE_LIFE_MS in the queue. */
const TOKEN_RETRY_MS = 30_000;

/** A BullMQ job id from a delivery id (custom ids may not hold ':' and must not look like numbers). */
export function bullId(phase: "m" | "t" | "w", deliveryId: string): string {
  return `${phase}-${deliveryId.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

export const JOB_OPTIONS = { attempts: 1, removeOnComplete: { age: 24 * 3600, count: 10_000 }, removeOnFail: { age: 7 * 24 * 3600 } };

/** A verified job that still carries its token (every job does until it has run). */
type Ready = Wire & { sealedToken: string };
/** Where a job sits, and the lock this worker holds on it: what a token request names. */
type Running = WirePlace & { lockToken: string };

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
  runWork?: (job: Job, token: JobToken, signal: AbortSignal, renew: RenewToken) => Promise<void>;
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

/** This process's workers on the shared queues: triage (👀, permission, quick answers) and lane work. */
export async function startRedisWorkers(options: RedisWorkersOptions): Promise<RedisWorkers> {
  const { metrics, sealer, lockMs } = options;
  // The engine reports model tokens and step durations through WorkflowDeps' `telemetry`.
  const deps: WorkflowDeps = { ...options.deps, telemetry: telemetryFor(metrics) };
  const connection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  const subscriber = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
  const lanes = new RedisLanes(connection);
  const workQueue = new Queue(WORK_QUEUE, { connection });
  const permissions = new PermissionCache();
  const controllers = new Map<string, AbortController>();
  let stopping = false;

  const refresher = await TokenRefresher.start(options.redisUrl, connection, sealer);
  await subscriber.subscribe(RedisLanes.CANCEL_CHANNEL);
  subscriber.on("message", (_channel: string, workId: string) => controllers.get(workId)?.abort("cancelled with /cancel"));

  /** The job's ports, with its token unsealed (or the one given: already unsealed, or renewed as the job works). */
  const open = (wire: Ready, token: JobToken | RenewableToken = openToken(sealer, wire.sealedToken, wire.job)) => workerPorts(deps, options.ports.portsFor(wire.job, token), permissions);

  /** The job at `place`, as an intake or worker signed it there; anything else is logged and failed without running. */
  const verified = (place: WirePlace, data: unknown): Wire => {
    try {
      return verifiedWire(sealer, place, data);
    } catch (error) {
      deps.log.error({ err: error, deliveryId: claimedDeliveryId(data), queue: place.queue, jobId: place.id }, "refused a job in Redis that no intake signed: it does not run");
      throw new UnrecoverableError(error instanceof Error ? error.message : String(error));
    }
  };

  /**
   * A running job's token renewed through the intakes (a long build outlasts its hour): kept in the job,
   * sealed, so a worker taking the job over starts with it. Throws TokenUnavailable when none came.
   */
  const renewal = (bullJob: BullJob, wire: Ready, running: Running): RenewToken => {
    let sealed = wire.sealedToken;
    return async () => {
      const { sealedToken, refreshed } = await refresher.fresh(wire.job, sealed, running);
      if (refreshed) {
        sealed = sealedToken;
        await bullJob.updateData({ ...wire, sealedToken }).catch((error: unknown) => deps.log.warn({ err: error, deliveryId: wire.job.deliveryId }, "the job's fresh token could not be kept in the queue"));
        deps.log.info({ deliveryId: wire.job.deliveryId }, "the running job's token was about to expire: an intake sent a fresh one");
      }
      return openToken(sealer, sealed, wire.job);
    };
  };

  /** The job as queued, verified, with a token that outlasts its work: a fresh one is kept in the job, for its next phase or a takeover. */
  const withFreshToken = async (bullJob: BullJob, running: Running): Promise<Ready> => {
    const queued = verified(running, bullJob.data);
    const { sealedToken } = queued;
    if (sealedToken === undefined) throw new UnrecoverableError(`job ${running.id} carries no token: it has already run`);
    try {
      const fresh = await refresher.fresh(queued.job, sealedToken, running);
      if (!fresh.refreshed) return { ...queued, sealedToken };
      const wire = { ...queued, sealedToken: fresh.sealedToken };
      await bullJob.updateData(wire);
      deps.log.info({ deliveryId: wire.job.deliveryId }, "the job's token was about to expire: an intake sent a fresh one");
      return wire;
    } catch (error) {
      // Only a token no intake could renew yet is worth waiting for; one that is not this job's, or refused, never will be.
      if (error instanceof RefreshRefused || !(error instanceof TokenUnavailable) || Date.now() - queued.job.receivedAt > QUEUE_LIFE_MS) throw error;
      deps.log.warn({ err: error, deliveryId: queued.job.deliveryId }, "no fresh token for the job yet: it waits and asks again");
      await bullJob.moveToDelayed(Date.now() + TOKEN_RETRY_MS, running.lockToken);
      throw new DelayedError();
    }
  };

  /** Throws (after a log line) when GitHub does not confirm a build job's approval: the build does not run. */
  const confirmApproval = async (port: ThreadPort, job: ApprovingJob) => {
    const mismatch = await approvalMismatch(port, job).catch(async (error: unknown) => {
      await reportFailedJob(deps.log, port, job, error);
      throw error;
    });
    if (mismatch === null) return;
    deps.log.error({ deliveryId: job.deliveryId, job: jobLabel(job), reason: mismatch }, "refused a build job: its approval is not on GitHub as the job says");
    metrics.jobs.inc({ kind: job.kind, outcome: "refused" });
    throw new UnrecoverableError(`the approval is not on GitHub as the job says: ${mismatch}`);
  };

  /** Once a job has run (done or failed, not sent back to wait), its data in Redis keeps no token. */
  const droppingToken = (queue: string, processor: (bullJob: BullJob, running: Running) => Promise<void>) => async (bullJob: BullJob, lockToken?: string) => {
    const running: Running = { queue, id: bullJob.id ?? "", lockToken: lockToken ?? bullJob.token ?? "" };
    try {
      await processor(bullJob, running);
    } catch (error) {
      if (!(error instanceof DelayedError || error instanceof WaitingError)) await dropToken(bullJob);
      throw error;
    }
    await dropToken(bullJob);
  };
  const dropToken = (bullJob: BullJob) =>
    withoutToken(bullJob.data) === bullJob.data ? Promise.resolve() : bullJob.updateData(withoutToken(bullJob.data)).catch((error: unknown) => deps.log.warn({ err: error, jobId: bullJob.id }, "could not remove a finished job's token from Redis"));

  const lanesFor = (wire: Ready): ThreadLanes => ({
    enqueue: async (job: Job) => {
      const workId = bullId("w", job.deliveryId);
      const { ahead, running } = await lanes.wait(threadOf(job), workId);
      await workQueue.add(job.kind, signWire(sealer, { queue: WORK_QUEUE, id: workId }, { job, keys: wire.keys, sealedToken: wire.sealedToken }), { ...JOB_OPTIONS, jobId: workId });
      const [active, workers] = await Promise.all([workQueue.getActiveCount(), workQueue.getWorkersCount()]);
      return { ahead, running, full: active >= Math.max(1, workers) * options.concurrency };
    },
    cancel: (thread) => lanes.cancel(thread),
    runningLabel: (thread) => lanes.runningLabel(thread),
  });

  const triage = new Worker(
    TRIAGE_QUEUE,
    droppingToken(TRIAGE_QUEUE, async (bullJob, running) => {
      const wire = await withFreshToken(bullJob, running);
      metrics.queueWaitSeconds.observe({ phase: "triage" }, (Date.now() - wire.job.receivedAt) / 1000);
      try {
        await triageJob(deps, open(wire), lanesFor(wire), wire.job);
      } catch (error) {
        // GitHub could not tell who may command us: a redelivery of this webhook gets handled, not dropped.
        if (error instanceof PermissionUnknown) await lanes.release(wire.keys);
        deps.log.error({ err: error, deliveryId: wire.job.deliveryId }, "handling a webhook failed");
      }
    }),
    { connection, concurrency: TRIAGE_CONCURRENCY, lockDuration: lockMs, stalledInterval: lockMs },
  );

  const work = new Worker(
    WORK_QUEUE,
    droppingToken(WORK_QUEUE, async (bullJob, running) => {
      const wire = await withFreshToken(bullJob, running);
      const { job } = wire;
      const thread = threadOf(job);
      const workId = running.id;
      // 1. One job per thread across every worker: a busy thread sends the job back to wait a little.
      if (!(await lanes.lock(thread, workId, jobLabel(job), lockMs))) {
        await bullJob.moveToDelayed(Date.now() + BUSY_RETRY_MS, running.lockToken);
        throw new DelayedError();
      }
      const controller = new AbortController();
      let handingOver = false;
      const heartbeat = setInterval(() => {
        void lanes.renew(thread, workId, lockMs).catch(() => undefined);
        void lanes.cancelled(workId).then((yes) => yes && controller.abort("cancelled with /cancel"), () => undefined);
      }, Math.max(200, Math.floor(lockMs / 3)));
      try {
        // 2. Dropped by a /cancel while it waited? Taken over from a worker that died? Then run (again).
        const start = await lanes.start(thread, workId);
        if (start === "dropped") {
          metrics.jobs.inc({ kind: job.kind, outcome: "dropped" });
          return;
        }
        if (start === "resume") deps.log.warn({ deliveryId: job.deliveryId, job: jobLabel(job) }, "taking over a job whose worker stopped; resuming from what was pushed");
        else deps.log.info({ deliveryId: job.deliveryId, job: jobLabel(job) }, "job started");
        if (await lanes.cancelled(workId)) controller.abort("cancelled with /cancel");
        controllers.set(workId, controller);
        if (stopping) controller.abort(new HandOver());
        metrics.queueWaitSeconds.observe({ phase: "work" }, (Date.now() - job.receivedAt) / 1000);
        const token = openToken(sealer, wire.sealedToken, job);
        const renew = renewal(bullJob, wire, running);
        // The token as renewed while the job works: it may outlive the one it started with.
        const live = () => open(wire, new RenewableToken(token, renew, warnUnrenewed(deps.log, job))).work;
        // 3. A build runs on an approval GitHub confirms, not on the job's word for it.
        if (job.kind === "build" || job.kind === "review-approval") await confirmApproval(live(), job);
        // 4. The use case, with the job's own token (a job that starts as its worker stops goes straight back).
        if (!handedOver(controller.signal)) {
          await metrics.time(job.kind, async () => {
            if (options.runWork) {
              // The use case could not report this itself: the runner died under it, more than once.
              // Reported on the thread, then failed as a job (BullMQ keeps it as failed; /metrics counts it so).
              await options.runWork(job, token, controller.signal, renew).catch(async (error: unknown) => {
                await reportFailedJob(deps.log, live(), job, error);
                throw error;
              });
            } else await workJob(deps, live(), job, controller.signal);
            return handOverTaken(controller.signal) ? "handed_over" : controller.signal.aborted ? "cancelled" : "done";
          });
        }
        // 5. This worker is shutting down: the job goes back to the queue, keeping its thread, and
        //    the next worker to take it resumes it (a `/cancel` meanwhile stops it there).
        if (handOverTaken(controller.signal)) {
          handingOver = true;
          await bullJob.moveToWait(running.lockToken);
          deps.log.info({ deliveryId: job.deliveryId, job: jobLabel(job) }, "job handed back to the queue at a safe point");
          throw new WaitingError();
        }
      } finally {
        clearInterval(heartbeat);
        controllers.delete(workId);
        if (handingOver) await lanes.renew(thread, workId, HANDED_OVER_HOLD_MS).catch(() => undefined);
        else await lanes.unlock(thread, workId).catch(() => undefined);
      }
    }),
    { connection, concurrency: options.concurrency, lockDuration: lockMs, stalledInterval: lockMs, maxStalledCount: 2 },
  );
  for (const worker of [triage, work]) {
    worker.on("error", (error) => deps.log.error({ err: error }, "queue worker error"));
    // A job failed by BullMQ itself (its workers kept dying under it) never reached `droppingToken`.
    worker.on("failed", (bullJob) => void (bullJob && dropToken(bullJob)));
  }

  return {
    running: () => controllers.size,
    stats: async () => ({ backend: "redis", waiting: 0, running: controllers.size, workers: 1, concurrency: options.concurrency, ready: true }),
    async close() {
      stopping = true;
      for (const controller of controllers.values()) controller.abort(new HandOver());
      await Promise.all([triage.close(), work.close()]);
      await Promise.all([workQueue.close(), refresher.close()]);
      subscriber.disconnect();
      await connection.quit().catch(() => undefined);
    },
  };
}
