import { fresherThan, type JobToken } from "../github/job-token.js";
import type { Logger, WorkflowDeps } from "../workflow/deps.js";
import { HandOver, handedOver } from "../workflow/hand-over.js";
import type { Job, Removal } from "./job.js";
import { fromRunnerSchema, type FromRunner, type ToRunner } from "./runner-protocol.js";
import { lowerPriority, SupervisedChild } from "./supervised-child.js";

export interface JobRunnerOptions {
  /** The compiled runner entry (lib/job-runner.js). */
  entry: string;
  /** The hidden-state key (base64), as its worker holds it. */
  stateKey: string;
  log: Logger;
  /** How much lower the runner's CPU priority is than ours (nice), so acknowledgements win the CPU. */
  niceness?: number;
  /** Hears the runner's model tokens and step durations (for /metrics). */
  telemetry?: WorkflowDeps["telemetry"];
}

/** A fresh token for a running job (asked of the intake), or null when none could be had. */
export type RenewToken = () => Promise<JobToken | null>;

interface Pending {
  job: Job;
  /** The job's token as last handed to the runner: a fresh runner taking the job over starts with it. */
  token: JobToken;
  renew: RenewToken | undefined;
  signal: AbortSignal;
  /** Runner processes that stopped while they ran this job. */
  crashes: number;
  resolve(): void;
  reject(error: Error): void;
}

/** A job that outlives this many runner processes is reported as failed instead of started again. */
const MAX_CRASHES = 2;

/**
 * A worker's job runner: a forked process, at a lower CPU priority, that does jobs' lane work (git,
 * the model, plan and build) for the local worker or a Redis worker. The worker's own event loop
 * keeps only triage — the 👀 and the permission check — so hundreds of git processes starting never
 * delay an acknowledgement. If the runner dies, a fresh one takes its jobs over and resumes them from
 * what was pushed; if the worker dies, the runner exits with it (its jobs are the worker's to hand on).
 */
export class JobRunner {
  private readonly runner: SupervisedChild<ToRunner, FromRunner>;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;

  /** Whether the runner process has started (jobs handed to it before then wait). */
  get isReady(): boolean {
    return this.runner.isReady;
  }

  constructor(private readonly options: JobRunnerOptions) {
    this.runner = new SupervisedChild<ToRunner, FromRunner>({
      entry: options.entry,
      // Ours: a worker's environment holds none of the intake's secrets.
      env: process.env,
      messages: fromRunnerSchema,
      hello: { type: "start", stateKey: options.stateKey },
      forked: (child) => lowerPriority(child, options.niceness ?? 10, options.log, "the job runner"),
      onMessage: (message) => {
        if (message.type === "usage") options.telemetry?.modelUsage(message.kind, message.usage);
        else if (message.type === "step") options.telemetry?.stepSeconds(message.seconds);
        else if (message.type === "token-request") void this.renew(message.run, message.id);
        else {
          const pending = this.pending.get(message.id);
          this.pending.delete(message.id);
          // Stopped for a hand-over there: recorded on the signal here, as a use case in this process would.
          if (pending && message.handedOver) handedOver(pending.signal);
          pending?.resolve();
        }
      },
      onRestart: (stopped) => this.takeOver(stopped),
    });
  }

  /**
   * Runs the job's lane work in the runner; `signal` reaches it there. Resolves when the use case returns.
   * `renew` answers the runner when the job's token runs low while it works (a long build).
   */
  run(job: Job, token: JobToken, signal: AbortSignal, renew?: RenewToken): Promise<void> {
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      this.pending.set(id, { job, token, renew, signal, crashes: 0, resolve, reject });
      signal.addEventListener("abort", () => this.abort(id, signal), { once: true });
      void this.runner.ready.then(() => this.dispatch(id));
    });
  }

  /** The removal's files go from the runner's work directory (a running job's once it ends). */
  removeRepositories(removal: Removal): void {
    void this.runner.ready.then(() => this.send({ type: "remove", removal }));
  }

  /** Stops the runner (after the jobs have been asked to stop and have returned). */
  stop(): void {
    this.runner.stopSupervising();
    // The runner exits when its channel closes (signals to the process group are not for it).
    if (this.runner.process?.connected) this.runner.process.disconnect();
  }

  private dispatch(id: number): void {
    const pending = this.pending.get(id);
    if (!pending) return;
    this.send({ type: "run", id, job: pending.job, token: pending.token });
    if (pending.signal.aborted) this.abort(id, pending.signal);
  }

  /** The runner asks (question `question`) for a fresh token for run `id`: it gets one, or null (it then works on with the one it has). */
  private async renew(id: number, question: number): Promise<void> {
    const pending = this.pending.get(id);
    const fresh = await (pending?.renew?.() ?? Promise.resolve(null)).catch((error: unknown) => {
      this.options.log.warn({ err: error, deliveryId: pending?.job.deliveryId }, "could not get a fresh token for a running job");
      return null;
    });
    // Kept for a fresh runner taking the job over, if it is fresher than the one the job has.
    if (pending && fresh && fresherThan(fresh, pending.token)) {
      pending.token = fresh;
      this.options.log.info({ deliveryId: pending.job.deliveryId }, "a running job's token was about to expire: its job runner has a fresh one");
    }
    this.send({ type: "token", id: question, token: fresh });
  }

  private abort(id: number, signal: AbortSignal): void {
    this.send({ type: "abort", id, reason: abortReason(signal), handOver: signal.reason instanceof HandOver });
  }

  /** A fresh runner replaced one that died: it takes the jobs over, resumed from what they pushed. */
  private takeOver({ code, signal, restartInMs, wasReady }: { code: number | null; signal: NodeJS.Signals | null; restartInMs: number; wasReady: boolean }): void {
    this.options.log.error({ code, signal, restartInMs, wasReady, jobs: this.pending.size }, "the job runner stopped; starting another to take its jobs over");
    // One that stopped before it was ready had been sent none of them: they wait for its replacement already.
    if (!wasReady) return;
    for (const [id, pending] of this.pending) {
      pending.crashes++;
      if (pending.crashes >= MAX_CRASHES) {
        this.pending.delete(id);
        pending.reject(new Error(`the process running it stopped unexpectedly ${pending.crashes} times (${signal ?? `exit code ${code}`})`));
      }
    }
    const again = [...this.pending.keys()];
    void this.runner.ready.then(() => again.forEach((id) => this.dispatch(id)));
  }

  private send(message: ToRunner): void {
    // Checked on arrival by the runner (toRunnerSchema); typed here.
    this.runner.send(message);
  }
}

function abortReason(signal: AbortSignal): string {
  return typeof signal.reason === "string" ? signal.reason : signal.reason instanceof Error ? signal.reason.message : "stopped";
}
