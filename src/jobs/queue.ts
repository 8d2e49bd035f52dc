export interface QueuedJob {
  /** One job at a time per key (an issue or pull request). */
  key: string;
  label: string;
  run(signal: AbortSignal): Promise<void>;
  /** Told when `/cancel` drops the job while it waits, or tells it to stop while it runs. */
  onCancel?(): void;
}

interface Lane {
  running: { job: QueuedJob; controller: AbortController } | null;
  waiting: QueuedJob[];
}

/** In-process job queue: jobs on different threads run concurrently, jobs on one thread in order. */
export class JobQueue {
  private readonly lanes = new Map<string, Lane>();
  private readonly active = new Set<Promise<void>>();
  private idleWaiters: Array<() => void> = [];
  /** Set by `abortAll`: every job from then on starts already stopped, with this reason. */
  private stopReason: string | null = null;

  constructor(private readonly onError: (error: unknown, job: QueuedJob) => void) {}

  /** Returns how many jobs are ahead of this one on its thread (0: starts now). */
  enqueue(job: QueuedJob): number {
    const lane = this.lanes.get(job.key) ?? { running: null, waiting: [] };
    this.lanes.set(job.key, lane);
    lane.waiting.push(job);
    const ahead = lane.waiting.length - 1 + (lane.running ? 1 : 0);
    if (!lane.running) this.startNext(job.key, lane);
    return ahead;
  }

  /** Aborts the running job on a thread and drops its waiting jobs; returns what was stopped. */
  cancel(key: string): { running: string | null; dropped: number } {
    const lane = this.lanes.get(key);
    if (!lane) return { running: null, dropped: 0 };
    const dropped = lane.waiting;
    lane.waiting = [];
    lane.running?.controller.abort("cancelled with /cancel");
    for (const job of [...dropped, ...(lane.running ? [lane.running.job] : [])]) job.onCancel?.();
    return { running: lane.running?.job.label ?? null, dropped: dropped.length };
  }

  /** Jobs waiting behind a running one, on every thread. */
  waitingCount(): number {
    let waiting = 0;
    for (const lane of this.lanes.values()) waiting += lane.waiting.length;
    return waiting;
  }

  runningLabel(key: string): string | null {
    return this.lanes.get(key)?.running?.job.label ?? null;
  }

  /** Resolves when no job runs or waits (tests and graceful shutdown). */
  idle(): Promise<void> {
    if (this.lanes.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Asks every running job to stop at its next safe point; `reason` reaches the job's signal. Jobs
   * still waiting, and jobs enqueued later, start with that signal already aborted: each stops at
   * once and says so on its thread, instead of being dropped after "Queued: … this starts when it is done".
   */
  abortAll(reason: string): void {
    this.stopReason = reason;
    for (const lane of this.lanes.values()) lane.running?.controller.abort(reason);
  }

  private startNext(key: string, lane: Lane): void {
    const job = lane.waiting.shift();
    if (!job) {
      lane.running = null;
      this.lanes.delete(key);
      if (this.lanes.size === 0) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        waiters.forEach((resolve) => resolve());
      }
      return;
    }
    const controller = new AbortController();
    if (this.stopReason !== null) controller.abort(this.stopReason);
    lane.running = { job, controller };
    const task = (async () => {
      try {
        await job.run(controller.signal);
      } catch (error) {
        this.onError(error, job);
      }
    })();
    this.active.add(task);
    void task.finally(() => {
      this.active.delete(task);
      this.startNext(key, lane);
    });
  }
}
