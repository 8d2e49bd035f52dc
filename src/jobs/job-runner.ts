import type { JobToken, RenewToken } from "../credentials/index.js";
import type { Logger } from "../shared/logger.js";
import { HandOver, handedOver } from "../shared/hand-over.js";
import type { Job, Removal } from "./job.js";
import type { JobTelemetry } from "./metrics.js";
import { fromJobRunnerSchema, type FromJobRunner, type ToJobRunner } from "./protocol.js";
import { SupervisedChild } from "./supervised-child.js";
import { answerTokenRequest } from "./token-relay.js";

export interface JobRunnerOptions {
  /** The compiled runner entry (lib/job-runner.js). */
  entry: string;
  /** The hidden-state key (base64), as its worker holds it. */
  stateKey: string;
  log: Logger;
  /** How much lower the runner's CPU priority is than ours (nice), so acknowledgements win the CPU. */
  niceness?: number;
  /** Hears the runner's model tokens and step durations (for /metrics). */
  telemetry?: JobTelemetry;
}

interface Pending {
  /** Its id in the runner's messages. */
  id: number;
  job: Job;
  /** The job's token as last handed to the runner: a fresh runner taking the job over starts with it. */
  token: JobToken;
  renew: RenewToken | undefined;
  signal: AbortSignal;
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
  private readonly runner: SupervisedChild<ToJobRunner, FromJobRunner, Pending>;
  private nextId = 0;

  /** Whether the runner process has started (jobs handed to it before then wait). */
  get isReady(): boolean {
    return this.runner.isReady;
  }

  constructor(private readonly options: JobRunnerOptions) {
    this.runner = new SupervisedChild<ToJobRunner, FromJobRunner, Pending>({
      entry: options.entry,
      // Ours: a worker's environment holds none of the intake's secrets.
      env: process.env,
      name: "the job runner",
      log: options.log,
      messages: fromJobRunnerSchema,
      hello: { type: "start", stateKey: options.stateKey },
      niceness: options.niceness ?? 10,
      // Gone the moment its worker is (job-runner-server.ts), so it may leave the worker's session: its nice then holds
      // on the whole machine.
      ownSession: true,
      onMessage: (message) => {
        if (message.type === "usage") options.telemetry?.modelUsage(message.kind, message.usage);
        else if (message.type === "step") options.telemetry?.stepSeconds(message.seconds);
        else if (message.type === "token-request") void this.renew(message.deliveryId, message.id);
        else this.done(message.id, message.handedOver === true);
      },
      work: {
        maxCrashes: MAX_CRASHES,
        // A fresh runner replaced one that died: it takes the jobs over, resumed from what they pushed.
        onHandOver: (runs) => runs.forEach((pending) => this.dispatch(pending)),
        onDrop: (pending, crashes, { code, signal }) =>
          pending.reject(
            new Error(
              `the process running it stopped unexpectedly ${crashes} times (${signal ?? `exit code ${code}`})`,
            ),
          ),
      },
    });
  }

  /**
   * Runs the job's lane work in the runner; `signal` reaches it there. Resolves when the use case returns.
   * `renew` answers the runner when the job's token runs low while it works (a long build).
   */
  run(job: Job, token: JobToken, signal: AbortSignal, renew?: RenewToken): Promise<void> {
    const id = this.nextId++;
    return new Promise<void>((resolve, reject) => {
      const pending: Pending = { id, job, token, renew, signal, resolve, reject };
      this.runner.track(id, pending);
      signal.addEventListener("abort", () => this.abort(id, signal), { once: true });
      void this.runner.ready.then(() => {
        if (this.runner.tracked(id)) this.dispatch(pending);
      });
    });
  }

  /** The removal's files go from the runner's work directory (a running job's once it ends). */
  removeRepositories(removal: Removal): void {
    void this.runner.ready.then(() => this.runner.send({ type: "remove", removal }));
  }

  /** Stops the runner (after the jobs have been asked to stop and have returned). */
  stop(): void {
    this.runner.stopSupervising();
    // The runner exits when its channel closes (signals to the process group are not for it).
    if (this.runner.process?.connected) this.runner.process.disconnect();
  }

  private dispatch(pending: Pending): void {
    this.runner.send({ type: "run", id: pending.id, job: pending.job, token: pending.token });
    if (pending.signal.aborted) this.abort(pending.id, pending.signal);
  }

  private done(id: number, wasHandedOver: boolean): void {
    const pending = this.runner.tracked(id);
    this.runner.settle(id);
    // Stopped for a hand-over there: recorded on the signal here, as a use case in this process would.
    if (pending && wasHandedOver) handedOver(pending.signal);
    pending?.resolve();
  }

  /**
   * The runner asks (question `question`) for a fresh token for the job of `deliveryId`: only for a
   * job it runs, with the renewal it came with; kept for a fresh runner taking the job over.
   */
  private async renew(deliveryId: string, question: number): Promise<void> {
    const pending = this.runner.trackedWhere((run) => run.job.deliveryId === deliveryId);
    const renewed = "a running job's token was about to expire: its job runner has a fresh one";
    await answerTokenRequest(
      { id: question, deliveryId },
      pending,
      async () => (await pending?.renew?.()) ?? null,
      (answer) => this.runner.send(answer),
      this.options.log,
      renewed,
    );
  }

  private abort(id: number, signal: AbortSignal): void {
    this.runner.send({ type: "abort", id, reason: abortReason(signal), handOver: signal.reason instanceof HandOver });
  }
}

function abortReason(signal: AbortSignal): string {
  return typeof signal.reason === "string"
    ? signal.reason
    : signal.reason instanceof Error
      ? signal.reason.message
      : "stopped";
}
