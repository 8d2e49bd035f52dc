import type { WorkflowDeps } from "../workflow/deps.js";
import { PermissionUnknown, triageJob, workJob, workerPorts, type JobPorts, type ThreadLanes } from "../workflow/run-job.js";
import type { JobBackend, QueueStats } from "./backend.js";
import { RecentKeys } from "./dedupe.js";
import type { Accepted } from "./from-webhook.js";
import { jobLabel, removalCovers, REMOVED_REASON, threadOf, type Job, type Removal } from "./job.js";
import { telemetryFor, type JobMetrics } from "./metrics.js";
import { PermissionCache } from "./permission-cache.js";
import { JobQueue } from "./queue.js";
import { Slots } from "../shared/slots.js";
import { Turns, type Turn } from "./turns.js";

export interface EmbeddedOptions {
  deps: WorkflowDeps;
  /** The worker's side of a job: its GitHub ports (own budget for the acknowledgement). */
  portsFor(job: Job): Promise<JobPorts>;
  concurrency: number;
  metrics: JobMetrics;
  /** Also told when a claim is released (a local worker tells the intake that holds the claims). */
  onRelease?: (keys: string[]) => void;
  /**
   * Where lane work runs when not in this process (the local worker's job runner); resolves when the
   * use case returns, with "failed" when it could not run to its end (its process kept dying; reported on the thread).
   */
  runWork?: (job: Job, signal: AbortSignal) => Promise<void | "failed">;
  /** Whether that process has started (for /healthz; lane work handed to it before then waits). */
  workReady?: () => boolean;
  /**
   * Told when a job is triaged and waits on its thread ("triaged"), and when nothing of it is left
   * ("finished": answered at triage, worked, cancelled while waiting, or dropped). A local worker
   * tells the intake, which hands unfinished jobs to a fresh worker if this one dies.
   */
  onSettled?: (job: Job, phase: "triaged" | "finished") => void;
  /**
   * Where a removal's files are removed when lane work runs elsewhere (the job runner, which knows
   * which of them its running jobs use); without it, this process's work directory keeper.
   */
  removeFiles?: (removal: Removal) => Promise<void>;
  /** How long one command's triage may hold back its installation's next (tests shorten it). */
  triageTurnMs?: number;
}

/** How long a command's triage may hold back the next command of its thread from the lane. */
const PLACE_LONGEST_MS = 5 * 60_000;

/**
 * The embedded backend: one `npm start`, no other service. Deduplication, thread lanes and the
 * BLUEPRINT_CONCURRENCY cap live in this process; triage starts on the turn after the webhook is answered.
 */
export class EmbeddedBackend implements JobBackend {
  private readonly recent = new RecentKeys();
  private readonly permissions = new PermissionCache();
  /** One triage at a time per installation, up to its 👀 (see `triageTurn`). */
  private readonly turns: Turns;
  /** Each thread's commands reach its lane in arrival order (see `inOrder`). */
  private readonly places = new Turns(PLACE_LONGEST_MS);
  private readonly queue: JobQueue;
  private readonly slots: Slots;
  private readonly triaging = new Set<Promise<void>>();
  /** Jobs triage put on their thread's lane (the others were answered at triage). */
  private readonly queued = new WeakSet<Job>();
  /** Lane work running now: a removal of its repository stops it. */
  private readonly running = new Map<Job, AbortController>();
  /** Recent removals: a job of theirs that reaches its turn afterwards is dropped. */
  private readonly removals: Removal[] = [];
  /** The work directory's tidying at start (lane work in this process). */
  private readonly tidying: Promise<unknown> | undefined;

  constructor(private readonly options: EmbeddedOptions) {
    // The engine reports model tokens and step durations through `telemetry`, for /metrics.
    this.options = { ...options, deps: { ...options.deps, telemetry: options.deps.telemetry ?? telemetryFor(options.metrics) } };
    this.slots = new Slots(options.concurrency);
    this.turns = new Turns(options.triageTurnMs);
    this.queue = new JobQueue((error, job) => options.deps.log.error({ err: error, job: job.label }, "job failed"));
    // Lane work in this process: trees an earlier process left go, and the work directory's bound is checked, before the first job.
    this.tidying = options.runWork ? Promise.resolve() : options.deps.workdir?.start();
  }

  async submit({ job, keys }: Accepted): Promise<boolean> {
    if (!this.recent.claim(keys)) return false;
    // The command's place on its thread, taken now, in arrival order (see `inOrder`).
    const place = this.places.take(threadOf(job));
    const task = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.triage(job, keys, place));
    this.triaging.add(task);
    void task.finally(() => this.triaging.delete(task));
    return true;
  }

  /**
   * A job a previous worker had already triaged (acknowledged, and queued on its thread): back on
   * its lane without a second 👀 or "Queued" notice; it resumes from what was pushed.
   */
  resume({ job, keys }: Accepted): void {
    if (!this.recent.claim(keys)) return;
    void this.lanes.enqueue(job).then(() => this.options.onSettled?.(job, "triaged"));
  }

  async removeRepositories(removal: Removal): Promise<void> {
    this.removals.push(removal);
    if (this.removals.length > 1_000) this.removals.shift();
    for (const [job, controller] of this.running) if (removalCovers(removal, job)) controller.abort(REMOVED_REASON);
    const removeFiles = this.options.removeFiles ?? (async (covered: Removal) => void (await this.options.deps.workdir?.remove(covered)));
    await removeFiles(removal);
  }

  async stats(): Promise<QueueStats> {
    return {
      backend: "embedded",
      waiting: this.triaging.size + this.queue.waitingCount() + this.slots.queued,
      running: this.slots.running,
      workers: 1,
      concurrency: this.slots.size,
      ready: this.options.workReady?.() ?? true,
    };
  }

  async idle(): Promise<void> {
    await this.tidying;
    while (this.triaging.size > 0) {
      await Promise.allSettled([...this.triaging]);
      await this.queue.idle();
    }
    await this.queue.idle();
  }

  async shutdown(reason: string, timeoutMs: number): Promise<void> {
    this.queue.abortAll(reason);
    await Promise.race([this.idle(), new Promise((resolve) => setTimeout(resolve, timeoutMs).unref())]);
  }

  private async triage(job: Job, keys: string[], place: Promise<Turn>): Promise<void> {
    const { deps, metrics } = this.options;
    const turn = await this.turns.take(job.installationId);
    metrics.queueWaitSeconds.observe({ phase: "triage" }, (Date.now() - job.receivedAt) / 1000);
    try {
      const ports = triageTurn(workerPorts(deps, await this.options.portsFor(job), this.permissions), turn);
      await triageJob(deps, ports, inOrder(this.lanes, place), job);
      this.options.onSettled?.(job, this.queued.has(job) ? "triaged" : "finished");
    } catch (error) {
      this.options.onSettled?.(job, "finished");
      // GitHub could not tell who may command us: a redelivery of this webhook gets handled, not dropped.
      if (error instanceof PermissionUnknown) {
        this.recent.release(keys);
        this.options.onRelease?.(keys);
      }
      deps.log.error({ err: error, deliveryId: job.deliveryId }, "handling a webhook failed");
    } finally {
      turn.end();
      void place.then((taken) => taken.end());
    }
  }

  private readonly lanes: ThreadLanes = {
    enqueue: async (job) => {
      const thread = threadOf(job);
      const running = this.queue.runningLabel(thread);
      const full = this.slots.full;
      this.queued.add(job);
      const settled = () => this.options.onSettled?.(job, "finished");
      const ahead = this.queue.enqueue({
        key: thread,
        label: jobLabel(job),
        run: (signal) => this.work(job, signal).finally(settled),
        // Dropped while waiting, or told to stop while running: finished as far as a takeover goes —
        // should this worker die before the job reaches its safe point, the next one must not resume it.
        onCancel: settled,
      });
      return { ahead, running, full };
    },
    cancel: async (thread) => this.queue.cancel(thread),
    runningLabel: async (thread) => this.queue.runningLabel(thread),
  };

  private work(job: Job, queueSignal: AbortSignal): Promise<void> {
    const { metrics } = this.options;
    return this.slots.run(async () => {
      // Its repository removed while it waited: dropped without running.
      if (this.removals.some((removal) => removalCovers(removal, job))) {
        metrics.jobs.inc({ kind: job.kind, outcome: "dropped" });
        return;
      }
      const controller = new AbortController();
      const stop = () => controller.abort(queueSignal.reason);
      if (queueSignal.aborted) stop();
      else queueSignal.addEventListener("abort", stop, { once: true });
      this.running.set(job, controller);
      try {
        await this.timedWork(job, controller.signal);
      } finally {
        this.running.delete(job);
        queueSignal.removeEventListener("abort", stop);
      }
    });
  }

  private timedWork(job: Job, signal: AbortSignal): Promise<void> {
    const { deps, metrics } = this.options;
    return metrics.time(job.kind, async () => {
      metrics.queueWaitSeconds.observe({ phase: "work" }, (Date.now() - job.receivedAt) / 1000);
      if (this.options.runWork) {
        if ((await this.options.runWork(job, signal)) === "failed") return "failed";
        return signal.aborted ? "cancelled" : "done";
      }
      const ports = workerPorts(deps, await this.options.portsFor(job), this.permissions);
      await workJob(deps, ports.work, job, signal);
      return signal.aborted ? "cancelled" : "done";
    });
  }
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

/**
 * The lanes as one command's triage sees them: it queues or cancels only once every command that
 * arrived before it on the same thread has been through triage. The installation's turn keeps that
 * order too, but it gives up after a while (a 👀 stuck in GitHub's rate limits): without this, a
 * `/cancel` could then reach the lane before the `/build` it was meant to stop, and be lost.
 */
function inOrder(lanes: ThreadLanes, place: Promise<Turn>): ThreadLanes {
  return {
    ...lanes,
    enqueue: async (job) => {
      await place;
      return lanes.enqueue(job);
    },
    cancel: async (thread) => {
      await place;
      return lanes.cancel(thread);
    },
  };
}
