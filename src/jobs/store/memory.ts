import { trimOldest } from "../../shared/bounded-map.js";
import { Slots } from "../../shared/slots.js";
import { jobLabel, removalCovers, threadOf, type Job, type Removal } from "../job.js";
import type { Carried, Enqueued, JobStore } from "./index.js";

/** Deliveries remembered at most (the oldest forgotten first). */
const CLAIMS_KEPT = 10_000;
/** Removals remembered at most. */
const REMOVALS_KEPT = 1_000;

/** Remembers recent claim keys (delivery, comment and review ids) so a redelivered event never starts a second job. */
export class Claims {
  private readonly keys = new Map<string, number>();

  constructor(private readonly capacity = CLAIMS_KEPT) {}

  /** Marks all the keys as seen when none of them was; false (and nothing marked) otherwise. */
  claim(keys: readonly string[]): boolean {
    if (keys.some((key) => this.keys.has(key))) return false;
    for (const key of keys) this.keys.set(key, Date.now());
    trimOldest(this.keys, this.capacity);
    return true;
  }

  release(keys: readonly string[]): void {
    for (const key of keys) this.keys.delete(key);
  }
}

export interface MemoryStoreOptions {
  /** BLUEPRINT_CONCURRENCY: lane work running at once in this process; the rest waits for a slot. */
  concurrency: number;
  /**
   * Lane work, once its turn on the thread and a slot have come; its controller is aborted by `/cancel` or shutdown.
   */
  work(job: Job, carried: Carried, controller: AbortController): Promise<void>;
  /** Told when `/cancel` drops a waiting job or stops the running one. */
  onCancel?: (job: Job) => void;
}

interface Queued {
  job: Job;
  carried: Carried;
}

interface Lane {
  running: { job: Job; controller: AbortController } | null;
  waiting: Queued[];
}

/**
 * The job store in one process: claims, thread lanes (jobs on different threads run at once, jobs on
 * one thread in order), the BLUEPRINT_CONCURRENCY cap and removals. An installation's commands are
 * triaged one at a time by the process itself (`../local-jobs.ts`), so every claim's turn is 1.
 */
export class MemoryStore implements JobStore {
  readonly shared = false;
  private readonly claims = new Claims();
  private readonly lanes = new Map<string, Lane>();
  private readonly slots: Slots;
  private readonly removals: Removal[] = [];
  private idleWaiters: Array<() => void> = [];
  /** Set by `stopAll`: every job from then on starts already stopped, with this reason. */
  private stopReason: string | null = null;

  constructor(private readonly options: MemoryStoreOptions) {
    this.slots = new Slots(options.concurrency);
  }

  async claim(keys: readonly string[]): Promise<{ turn: number } | null> {
    return this.claims.claim(keys) ? { turn: 1 } : null;
  }

  async release(keys: readonly string[]): Promise<void> {
    this.claims.release(keys);
  }

  async triaged(): Promise<void> {}

  async enqueueWork(job: Job, carried: Carried): Promise<Enqueued> {
    const thread = threadOf(job);
    const lane = this.lanes.get(thread) ?? { running: null, waiting: [] };
    this.lanes.set(thread, lane);
    const running = lane.running ? jobLabel(lane.running.job) : null;
    const full = this.slots.full;
    lane.waiting.push({ job, carried });
    const ahead = lane.waiting.length - 1 + (lane.running ? 1 : 0);
    if (!lane.running) this.startNext(thread, lane);
    return { ahead, running, full };
  }

  async cancel(thread: string): Promise<{ running: string | null; dropped: number }> {
    const lane = this.lanes.get(thread);
    if (!lane) return { running: null, dropped: 0 };
    const dropped = lane.waiting;
    lane.waiting = [];
    lane.running?.controller.abort("cancelled with /cancel");
    for (const { job } of [...dropped, ...(lane.running ? [lane.running] : [])]) this.options.onCancel?.(job);
    return { running: lane.running ? jobLabel(lane.running.job) : null, dropped: dropped.length };
  }

  async runningLabel(thread: string): Promise<string | null> {
    const running = this.lanes.get(thread)?.running;
    return running ? jobLabel(running.job) : null;
  }

  async recordRemoval(removal: Removal): Promise<void> {
    this.removals.push(removal);
    if (this.removals.length > REMOVALS_KEPT) this.removals.shift();
  }

  async removed(job: Job): Promise<boolean> {
    return this.removals.some((removal) => removalCovers(removal, job));
  }

  /** Jobs waiting on their thread or for a slot, and lane work running now (for /healthz). */
  counts(): { waiting: number; running: number; concurrency: number } {
    let waiting = this.slots.queued;
    for (const lane of this.lanes.values()) waiting += lane.waiting.length;
    return { waiting, running: this.slots.running, concurrency: this.slots.size };
  }

  /** Resolves when no lane work runs or waits. */
  idle(): Promise<void> {
    if (this.lanes.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Asks every running job to stop at its next safe point with `reason`. Jobs still waiting, and jobs
   * queued later, start with that signal already aborted: each stops at once and says so on its
   * thread, instead of being dropped after "Queued: … this starts when it is done".
   */
  stopAll(reason: string): void {
    this.stopReason = reason;
    for (const lane of this.lanes.values()) lane.running?.controller.abort(reason);
  }

  private startNext(thread: string, lane: Lane): void {
    const next = lane.waiting.shift();
    if (!next) {
      lane.running = null;
      this.lanes.delete(thread);
      if (this.lanes.size === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
      return;
    }
    const controller = new AbortController();
    if (this.stopReason !== null) controller.abort(this.stopReason);
    lane.running = { job: next.job, controller };
    // The work reports its own failures; the lane moves on whatever happens.
    void this.slots
      .run(() => this.options.work(next.job, next.carried, controller))
      .catch(() => undefined)
      .finally(() => this.startNext(thread, lane));
  }
}
