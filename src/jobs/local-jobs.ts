import type { WorkflowDeps } from "../workflow/deps.js";
import { PermissionUnknown, type JobPorts } from "../workflow/run-job.js";
import type { JobBackend, QueueStats } from "./backend.js";
import type { Accepted } from "./from-webhook.js";
import { jobLabel, threadOf, type Job, type Removal } from "./job.js";
import { telemetryFor, type JobMetrics } from "./metrics.js";
import { JobRuntime, removeRepositoryFiles } from "./runtime.js";
import { MemoryStore } from "./store/memory.js";
import { Turns, type Turn } from "./turns.js";

export interface LocalJobsOptions {
  deps: WorkflowDeps;
  /** The job's GitHub ports (own budgets for the acknowledgement and quick answers). */
  portsFor(job: Job): Promise<JobPorts>;
  concurrency: number;
  metrics: JobMetrics;
  /** Also told when a claim is released (a local worker tells the intake that holds the claims). */
  onRelease?: (keys: string[]) => void;
  /**
   * Where lane work runs when not in this process (the local worker's job runner); resolves when the
   * use case returns, and rejects when it could not run to its end (its process kept dying).
   */
  runWork?: (job: Job, signal: AbortSignal) => Promise<void>;
  /** Whether that process has started (for /healthz; lane work handed to it before then waits). */
  workReady?: () => boolean;
  /**
   * Told when a job is triaged and waits on its thread ("triaged"), and when nothing of it is left
   * ("finished": answered at triage, worked, cancelled, or dropped). A local worker tells the intake,
   * which hands unfinished jobs to a fresh worker if this one dies.
   */
  onSettled?: (job: Job, phase: "triaged" | "finished") => void;
  /**
   * Where a removal's files go when lane work runs elsewhere (the job runner); without it, this process's work
   * directory keeper.
   */
  removeFiles?: (removal: Removal) => Promise<void>;
  /** How long one command's triage may hold back its installation's next (tests shorten it). */
  triageTurnMs?: number;
}

/** How long a command's triage may hold back the next command of its thread from the lane. */
const PLACE_LONGEST_MS = 5 * 60_000;

/**
 * The job runtime over the memory store, as the local worker (no Redis) runs it, or a test's intake
 * in its own process: triage starts on the turn after the webhook is answered, one at a time per
 * installation up to its 👀; each thread's commands reach its lane in arrival order.
 */
export class LocalJobs implements JobBackend {
  readonly store: MemoryStore;
  private readonly runtime: JobRuntime;
  /** One triage at a time per installation, up to its 👀 (see `triageTurn` in runtime.ts). */
  private readonly turns: Turns;
  /**
   * Each thread's commands reach its lane in arrival order. The installation's turn keeps that order
   * too, but it gives up after a while (a 👀 stuck in GitHub's rate limits): without this, a `/cancel`
   * could then reach the lane before the `/build` it was meant to stop, and be lost.
   */
  private readonly places = new Turns(PLACE_LONGEST_MS);
  private readonly triaging = new Set<Promise<void>>();
  /** The work directory's tidying at start (lane work in this process). */
  private readonly tidying: Promise<unknown> | undefined;

  constructor(private readonly options: LocalJobsOptions) {
    const settled = (job: Job) => options.onSettled?.(job, "finished");
    // Dropped while waiting, or told to stop while running: finished as far as a takeover goes —
    // should this worker die before the job reaches its safe point, the next one must not resume it.
    this.store = new MemoryStore({
      concurrency: options.concurrency,
      work: (job, _carried, controller) => this.work(job, controller).finally(() => settled(job)),
      onCancel: settled,
    });
    // The engine reports model tokens and step durations through `telemetry`, for /metrics.
    this.runtime = new JobRuntime(this.store, options.metrics, {
      ...options.deps,
      telemetry: options.deps.telemetry ?? telemetryFor(options.metrics),
    });
    this.turns = new Turns(options.triageTurnMs);
    // Lane work in this process: trees an earlier process left go, and the work directory's bound is checked, before
    // the first job.
    this.tidying = options.runWork ? Promise.resolve() : options.deps.workdir?.start();
  }

  async submit(accepted: Accepted): Promise<boolean> {
    if (!(await this.store.claim(accepted.keys))) return false;
    this.take(accepted);
    return true;
  }

  /** A job whose delivery is claimed (here, or by the intake that handed it over): triaged on the next turn. */
  take({ job, keys }: Accepted): void {
    // The command's place on its thread, taken now, in arrival order.
    const place = this.places.take(threadOf(job));
    const task = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.triage(job, keys, place));
    this.triaging.add(task);
    void task.finally(() => this.triaging.delete(task));
  }

  /**
   * A job a previous worker had already triaged (acknowledged, and queued on its thread): back on
   * its lane without a second 👀 or "Queued" notice; it resumes from what was pushed.
   */
  resume({ job, keys }: Accepted): void {
    void this.store.enqueueWork(job, { keys }).then(() => this.options.onSettled?.(job, "triaged"));
  }

  async removeRepositories(removal: Removal): Promise<void> {
    await this.store.recordRemoval(removal);
    this.runtime.stopCovered(removal);
    await (this.options.removeFiles ?? ((covered: Removal) => removeRepositoryFiles(this.runtime.deps, covered)))(
      removal,
    );
  }

  async stats(): Promise<QueueStats> {
    const { waiting, running, concurrency } = this.store.counts();
    return {
      backend: "local",
      waiting: this.triaging.size + waiting,
      running,
      workers: 1,
      concurrency,
      ready: this.options.workReady?.() ?? true,
    };
  }

  async idle(): Promise<void> {
    await this.tidying;
    while (this.triaging.size > 0) {
      await Promise.allSettled([...this.triaging]);
      await this.store.idle();
    }
    await this.store.idle();
  }

  async shutdown(reason: string, timeoutMs: number): Promise<void> {
    this.store.stopAll(reason);
    await Promise.race([this.idle(), new Promise((resolve) => setTimeout(resolve, timeoutMs).unref())]);
  }

  private async triage(job: Job, keys: string[], place: Promise<Turn>): Promise<void> {
    const turn = await this.turns.take(job.installationId);
    try {
      const { queued, error } = await this.runtime.triage(job, { keys }, await this.options.portsFor(job), {
        turn,
        after: place,
      });
      if (error instanceof PermissionUnknown) this.options.onRelease?.(keys);
      this.options.onSettled?.(job, queued && !error ? "triaged" : "finished");
    } catch (error) {
      this.options.onSettled?.(job, "finished");
      this.runtime.deps.log.error({ err: error, deliveryId: job.deliveryId }, "handling a webhook failed");
    } finally {
      turn.end();
      void place.then((taken) => taken.end());
    }
  }

  private async work(job: Job, controller: AbortController): Promise<void> {
    const { runWork } = this.options;
    // A failure of the job runner's is reported on the thread by the runtime; anything else escaping it is logged here.
    await this.runtime
      .work(job.deliveryId, job, controller, {
        ports: () => this.options.portsFor(job),
        run: runWork && ((signal) => runWork(job, signal)),
      })
      .catch((error: unknown) => this.runtime.deps.log.error({ err: error, job: jobLabel(job) }, "job failed"));
  }
}
