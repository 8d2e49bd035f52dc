import { HandOver, handedOver, handOverTaken } from "../shared/hand-over.js";
import type { WorkflowDeps } from "../workflow/deps.js";
import {
  isApprovingJob,
  PermissionUnknown,
  refusedApproval,
  reportFailedJob,
  triageJob,
  workerPorts,
  workJob,
  type JobPorts,
  type ThreadLanes,
} from "../workflow/run-job.js";
import { removalCovers, REMOVED_REASON, type Job, type Removal } from "./job.js";
import type { JobMetrics } from "./metrics.js";
import { PermissionCache } from "./permission-cache.js";
import type { Carried, JobStore } from "./store/index.js";
import type { Turn } from "./turns.js";

/** A job's GitHub access for its lane work, as the process that took it has it. */
export interface WorkAccess {
  /** Its ports, with its token as it is now. */
  ports(): Promise<JobPorts>;
  /** Lane work in a job runner (resolves when the use case returns); without it, the use case runs in this process. */
  run?: ((signal: AbortSignal) => Promise<void>) | undefined;
}

/**
 * How one triage keeps its place: the installation's `turn` ends at its 👀; the lane is reached only `after` the
 * thread's earlier commands.
 */
export interface TriageOrder {
  turn?: Turn;
  after?: Promise<unknown>;
}

/**
 * The job runtime, written once for every process that works jobs — the local worker, a Redis queue
 * worker, and the Action and CLI's one job: triage (permission, 👀, quick answers), then the job's
 * thread lane in its store, then the lane work (in this process or a job runner). What differs
 * between them is the store (memory or Redis) and how a job reaches triage and its turn.
 */
export class JobRuntime {
  private readonly permissions = new PermissionCache();
  /** Lane work running here, by id: a removal, a `/cancel` heard from elsewhere, or a hand-over stops it. */
  private readonly running = new Map<string, { job: Job; controller: AbortController }>();
  private handingOver = false;

  /**
   * `metrics`: this process's, for /metrics (none for the Action and the CLI, which serve none: prom-client stays out
   * of their bundle).
   */
  constructor(
    readonly store: JobStore,
    private readonly metrics: JobMetrics | null,
    readonly deps: WorkflowDeps,
  ) {}

  get runningCount(): number {
    return this.running.size;
  }

  /**
   * Triage, and the job onto its thread's lane (what it takes along: `carried`). Resolves with whether
   * it was queued there, or with the error that stopped it (logged; a `PermissionUnknown` releases
   * its claim, so GitHub's redelivery of the webhook is handled, not dropped).
   */
  async triage(
    job: Job,
    carried: Carried,
    raw: JobPorts,
    order: TriageOrder = {},
  ): Promise<{ queued: boolean; error?: unknown }> {
    const { deps, store } = this;
    this.metrics?.queueWaitSeconds.observe({ phase: "triage" }, (Date.now() - job.receivedAt) / 1000);
    let queued = false;
    const afterEarlier = <T>(then: () => Promise<T>) => (order.after ?? Promise.resolve()).then(then);
    const lanes: ThreadLanes = {
      enqueue: (queuedJob) => afterEarlier(() => ((queued = true), store.enqueueWork(queuedJob, carried))),
      cancel: (thread) => afterEarlier(() => store.cancel(thread)),
      runningLabel: (thread) => store.runningLabel(thread),
    };
    try {
      const ports = workerPorts(deps, raw, this.permissions);
      await triageJob(deps, order.turn ? triageTurn(ports, order.turn) : ports, lanes, job, {
        answerOnce: store.shared,
      });
      return { queued };
    } catch (error) {
      if (error instanceof PermissionUnknown) await store.release(carried.keys);
      deps.log.error({ err: error, deliveryId: job.deliveryId }, "handling a webhook failed");
      return { queued, error };
    } finally {
      order.turn?.end();
      // Triaged: the installation's next command may take an earlier turn (a count left too high lapses by itself).
      await store
        .triaged(job.installationId)
        .catch((error: unknown) =>
          deps.log.warn(
            { err: error, deliveryId: job.deliveryId },
            "could not count a triaged command off its installation's pending ones",
          ),
        );
    }
  }

  /**
   * Lane work, its thread's turn come: dropped when a removal covers it, refused when it builds on an approval GitHub
   * does not confirm (`refusal`), else the use case (here or in a job runner) under `controller`, timed and counted. A
   * failure the use case could not report itself (its job runner kept dying) is reported on the thread, logged and
   * counted, and resolved with (`failed`: Redis fails the job with it).
   */
  async work(id: string, job: Job, controller: AbortController, access: WorkAccess): Promise<{ failed?: unknown }> {
    const { metrics } = this;
    this.running.set(id, { job, controller });
    if (this.handingOver) controller.abort(new HandOver());
    try {
      if (await this.store.removed(job)) {
        metrics?.jobs.inc({ kind: job.kind, outcome: "dropped" });
        return {};
      }
      const signal = controller.signal;
      const port = async () => workerPorts(this.deps, await access.ports(), this.permissions).work;
      // Only a build's approval is read back, so only a build job takes its ports before the use case.
      const refused = isApprovingJob(job) ? await this.refusal(job, await port()) : undefined;
      if (refused !== undefined) return { failed: refused };
      // A job that starts as its worker stops goes straight back.
      if (handedOver(signal)) return {};
      let failed: unknown;
      const timed = metrics
        ? metrics.time.bind(metrics)
        : async (_kind: string, run: () => Promise<unknown>) => void (await run());
      await timed(job.kind, async () => {
        metrics?.queueWaitSeconds.observe({ phase: "work" }, (Date.now() - job.receivedAt) / 1000);
        if (!access.run) await workJob(this.deps, await port(), job, signal);
        else {
          failed = await access.run(signal).then(
            () => undefined,
            async (error: unknown) => (await reportFailedJob(this.deps.log, await port(), job, error), error),
          );
        }
        return failed !== undefined
          ? "failed"
          : handOverTaken(signal)
            ? "handed_over"
            : signal.aborted
              ? "cancelled"
              : "done";
      });
      return failed === undefined ? {} : { failed };
    } finally {
      this.running.delete(id);
    }
  }

  /**
   * Why a build job does not run (its approval read once from GitHub, `refusedApproval`; or that read failed, reported
   * on the thread), or undefined when it runs.
   */
  private async refusal(job: Job, port: JobPorts["work"]): Promise<unknown> {
    try {
      const reason = await refusedApproval(this.deps, port, job, this.store.shared);
      if (reason === null) return undefined;
      this.metrics?.jobs.inc({ kind: job.kind, outcome: "refused" });
      return new Error(`the approval is not on GitHub as the job says: ${reason}`);
    } catch (error) {
      await reportFailedJob(this.deps.log, port, job, error);
      return error;
    }
  }

  /** Stops the running job `id` at its next safe point (a `/cancel` heard from another process). */
  stop(id: string, reason: string): void {
    this.running.get(id)?.controller.abort(reason);
  }

  /** A removal: the running jobs it covers stop at their next safe point. */
  stopCovered(removal: Removal): void {
    for (const { job, controller } of this.running.values())
      if (removalCovers(removal, job)) controller.abort(REMOVED_REASON);
  }

  /**
   * At shutdown with Redis: every job running here, and any that starts from now, stops at its next safe point to be
   * handed back.
   */
  handOverAll(): void {
    this.handingOver = true;
    for (const { controller } of this.running.values()) controller.abort(new HandOver());
  }
}

/**
 * A removal's files go from this process's work directory (a running job's once it ends), as the job runner and a
 * worker without one remove them.
 */
export async function removeRepositoryFiles(deps: WorkflowDeps, removal: Removal): Promise<void> {
  const { deliveryId } = removal;
  await (deps.workdir?.remove(removal) ?? Promise.resolve(null)).then(
    (files) =>
      files &&
      deps.log.info({ deliveryId, ...files }, "removed the files of repositories Blueprint no longer has access to"),
    (error: unknown) =>
      deps.log.error(
        { err: error, deliveryId },
        "could not remove the files of repositories Blueprint no longer has access to",
      ),
  );
}

/**
 * A triage's turn on its installation ends when its 👀 is out (or its quick answer starts, or it
 * ends): then the next command of that installation starts its triage. In a burst, every
 * installation's first command is triaged before anyone's second, and that costs the others little:
 * their 👀 would wait for the installation's pacing of writes (one a second) anyway. A command
 * queued on its thread is enqueued in the same turn as its 👀 resolves, so arrival order holds.
 */
function triageTurn(ports: JobPorts, turn: Turn): JobPorts {
  const { ack, reply } = ports;
  return {
    ...ports,
    ack: { ...ack, reactToComment: (...args) => ack.reactToComment(...args).finally(() => turn.end()) },
    reply: {
      ...reply,
      postComment: (...args) => {
        turn.end();
        return reply.postComment(...args);
      },
    },
  };
}
