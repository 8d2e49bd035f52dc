import { DelayedError, UnrecoverableError, WaitingError, type Job as BullJob } from "bullmq";
import { approvalMismatch, isApprovingJob, type ApprovingJob } from "../workflow/approval-on-github.js";
import { HandOver, handedOver, handOverTaken } from "../shared/hand-over.js";
import type { ThreadPort } from "../workflow/ports.js";
import { PermissionUnknown, reportFailedJob, triageJob, workJob, workerPorts, type ThreadLanes } from "../workflow/run-job.js";
import { jobLabel, threadOf, type Job } from "./job.js";
import { bullId, JOB_OPTIONS, signWire, WORK_QUEUE } from "./job-wire.js";
import type { RedisWorkerContext } from "./redis-worker-context.js";
import { keepThread, leaveThread } from "./redis-thread-hold.js";
import { heldToken, liveToken, withFreshToken, type Ready, type Running } from "./redis-worker-tokens.js";

/** How soon a job whose thread is busy looks again. */
const BUSY_RETRY_MS = 500;

/** The job's ports, with its token unsealed (or renewed as the job works, `live`). */
function jobPorts(ctx: RedisWorkerContext, wire: Ready, live?: ReturnType<typeof liveToken>) {
  return workerPorts(ctx.deps, ctx.ports.portsFor(wire.job, live?.current ?? heldToken(ctx, wire)), ctx.permissions);
}

/** Triage's way onto a thread's lane: lane work queued in Redis, signed, with the job's sealed token. */
function lanesFor(ctx: RedisWorkerContext, wire: Ready): ThreadLanes {
  const { lanes, workQueue } = ctx;
  return {
    enqueue: async (job: Job) => {
      const workId = bullId("w", job.deliveryId);
      const { ahead, running } = await lanes.wait(threadOf(job), workId);
      await workQueue.add(job.kind, signWire(ctx.sealer, { queue: WORK_QUEUE, id: workId }, { job, keys: wire.keys, sealedToken: wire.sealedToken }), { ...JOB_OPTIONS, jobId: workId });
      const [active, workers] = await Promise.all([workQueue.getActiveCount(), ctx.workQueueWorkers()]);
      return { ahead, running, full: active >= Math.max(1, workers) * ctx.concurrency };
    },
    cancel: (thread) => lanes.cancel(thread),
    runningLabel: (thread) => lanes.runningLabel(thread),
  };
}

/** Triage: 👀, the permission check and quick answers; lane work is queued for the work processor. */
export function triageProcessor(ctx: RedisWorkerContext) {
  return async (bullJob: BullJob, running: Running): Promise<void> => {
    const wire = await withFreshToken(ctx, bullJob, running);
    ctx.metrics.queueWaitSeconds.observe({ phase: "triage" }, (Date.now() - wire.job.receivedAt) / 1000);
    try {
      await triageJob(ctx.deps, jobPorts(ctx, wire), lanesFor(ctx, wire), wire.job);
    } catch (error) {
      // GitHub could not tell who may command us: a redelivery of this webhook gets handled, not dropped.
      if (error instanceof PermissionUnknown) await ctx.lanes.release(wire.keys);
      ctx.log.error({ err: error, deliveryId: wire.job.deliveryId }, "handling a webhook failed");
    } finally {
      // Triaged: the installation's next command may take an earlier turn (a count left too high lapses by itself).
      await ctx.lanes.settle(wire.job.installationId).catch((error: unknown) => ctx.log.warn({ err: error, deliveryId: wire.job.deliveryId }, "could not count a triaged command off its installation's pending ones in Redis"));
    }
  };
}

/** Lane work: one job per thread across every worker, resumable by another worker if this one stops. */
export function workProcessor(ctx: RedisWorkerContext) {
  return async (bullJob: BullJob, running: Running): Promise<void> => {
    const wire = await withFreshToken(ctx, bullJob, running);
    const { job } = wire;
    const held = { thread: threadOf(job), workId: running.id, deliveryId: job.deliveryId };
    // 1. One job per thread across every worker: a busy thread sends the job back to wait a little.
    if (!(await ctx.lanes.lock(held.thread, held.workId, jobLabel(job), ctx.lockMs))) {
      await bullJob.moveToDelayed(Date.now() + BUSY_RETRY_MS, running.lockToken);
      throw new DelayedError();
    }
    const controller = new AbortController();
    const stopKeeping = keepThread(ctx.lanes, ctx.log, held, ctx.lockMs, controller);
    let handingOver = false;
    try {
      // 2. Dropped by a /cancel while it waited? Taken over from a worker that died? Then run (again).
      if (!(await startOnThread(ctx, job, held.workId, controller))) return;
      // 3 and 4. The approval confirmed on GitHub, then the use case.
      await runUseCase(ctx, bullJob, wire, running, controller.signal);
      // 5. This worker is shutting down: the job goes back to the queue, keeping its thread, and
      //    the next worker to take it resumes it (a `/cancel` meanwhile stops it there).
      handingOver = handOverTaken(controller.signal);
      if (handingOver) await handBack(ctx, bullJob, job, running);
    } finally {
      stopKeeping();
      ctx.controllers.delete(held.workId);
      await leaveThread(ctx.lanes, ctx.log, held, handingOver);
    }
  };
}

/** Step 2: false when a /cancel dropped the job while it waited; else it runs, its controller registered for /cancel and hand-over. */
async function startOnThread(ctx: RedisWorkerContext, job: Job, workId: string, controller: AbortController): Promise<boolean> {
  const start = await ctx.lanes.start(threadOf(job), workId);
  if (start === "dropped") {
    ctx.metrics.jobs.inc({ kind: job.kind, outcome: "dropped" });
    return false;
  }
  // Its repository removed from the App since (an uninstall): dropped, run or resumed.
  if (await ctx.lanes.removed(job)) {
    ctx.metrics.jobs.inc({ kind: job.kind, outcome: "dropped" });
    return false;
  }
  if (start === "resume") ctx.log.warn({ deliveryId: job.deliveryId, job: jobLabel(job) }, "taking over a job whose worker stopped; resuming from what was pushed");
  else ctx.log.info({ deliveryId: job.deliveryId, job: jobLabel(job) }, "job started");
  if (await ctx.lanes.cancelled(workId)) controller.abort("cancelled with /cancel");
  ctx.controllers.set(workId, controller);
  if (ctx.stopping()) controller.abort(new HandOver());
  return true;
}

/** Steps 3 and 4: a build runs on an approval GitHub confirms; the use case runs with the job's own token, renewed as it works. */
async function runUseCase(ctx: RedisWorkerContext, bullJob: BullJob, wire: Ready, running: Running, signal: AbortSignal): Promise<void> {
  const { job } = wire;
  ctx.metrics.queueWaitSeconds.observe({ phase: "work" }, (Date.now() - job.receivedAt) / 1000);
  const token = liveToken(ctx, bullJob, wire, running);
  // The token as renewed while the job works: it may outlive the one it started with.
  const live = () => jobPorts(ctx, wire, token).work;
  if (isApprovingJob(job)) await confirmApproval(ctx, live(), job);
  // A job that starts as its worker stops goes straight back.
  if (handedOver(signal)) return;
  const { runWork } = ctx;
  await ctx.metrics.time(job.kind, async () => {
    if (runWork) {
      // The use case could not report this itself: the runner died under it, more than once.
      // Reported on the thread, then failed as a job (BullMQ keeps it as failed; /metrics counts it so).
      await runWork(job, token.held, signal, token.renew).catch(async (error: unknown) => {
        await reportFailedJob(ctx.log, live(), job, error);
        throw error;
      });
    } else await workJob(ctx.deps, live(), job, signal);
    return handOverTaken(signal) ? "handed_over" : signal.aborted ? "cancelled" : "done";
  });
}

/** Throws (after a log line) when GitHub does not confirm a build job's approval: the build does not run. */
async function confirmApproval(ctx: RedisWorkerContext, port: ThreadPort, job: ApprovingJob): Promise<void> {
  const mismatch = await approvalMismatch(port, job).catch(async (error: unknown) => {
    await reportFailedJob(ctx.log, port, job, error);
    throw error;
  });
  if (mismatch === null) return;
  ctx.log.error({ deliveryId: job.deliveryId, job: jobLabel(job), reason: mismatch }, "refused a build job: its approval is not on GitHub as the job says");
  ctx.metrics.jobs.inc({ kind: job.kind, outcome: "refused" });
  throw new UnrecoverableError(`the approval is not on GitHub as the job says: ${mismatch}`);
}

/** At shutdown: every job running here stops at its next safe point and is handed back (step 5). */
export function handOverAll(controllers: Map<string, AbortController>): void {
  for (const controller of controllers.values()) controller.abort(new HandOver());
}

/** Step 5: the job back in the queue at a safe point, for the next worker to resume. */
async function handBack(ctx: RedisWorkerContext, bullJob: BullJob, job: Job, running: Running): Promise<never> {
  await bullJob.moveToWait(running.lockToken);
  ctx.log.info({ deliveryId: job.deliveryId, job: jobLabel(job) }, "job handed back to the queue at a safe point");
  throw new WaitingError();
}
