import type { JobToken, JobTokenSource } from "../github/job-token.js";
import type { Logger } from "../workflow/deps.js";
import type { JobBackend, QueueStats } from "./backend.js";
import { trimOldest } from "./bounded-map.js";
import { RecentKeys } from "./dedupe.js";
import type { Accepted } from "./from-webhook.js";
import { removalCovers, type Job, type Removal } from "./job.js";
import { fromWorkerSchema, type FromWorker, type ToWorker } from "./local-protocol.js";
import { lowerPriority, PendingAnswers, SupervisedChild, WORKER_NICENESS } from "./supervised-child.js";

interface InFlight {
  job: Job;
  keys: string[];
  token: JobToken;
  /** The worker acknowledged it and queued it on its thread. */
  triaged: boolean;
  /** Workers that stopped while they held it. */
  crashes: number;
}

/** A job that outlives this many local workers is dropped instead of handed to another. */
const MAX_CRASHES = 3;

/**
 * Secrets only intake holds: a forked worker's or job runner's environment never has them. The key's
 * path (`PRIVATE_KEY_PATH`) stays: it is no secret, and the sandbox hides what it names from the
 * agent's commands, which run under the job runner.
 */
const INTAKE_ONLY = ["PRIVATE_KEY", "WEBHOOK_SECRET", "WEBHOOK_PROXY_URL", "CLIENT_SECRET"];

/** `env` without the secrets only intake holds. */
export function withoutIntakeSecrets(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const kept = { ...env };
  for (const name of INTAKE_ONLY) delete kept[name];
  return kept;
}

export interface LocalWorkerOptions {
  /** The compiled worker entry (lib/local-worker.js). */
  entry: string;
  tokens: JobTokenSource;
  /** The hidden-state key's bytes: handed over in memory, first thing. */
  stateKey: Buffer;
  log: Logger;
  env?: NodeJS.ProcessEnv;
  /**
   * How much lower the worker's CPU priority is than the intake's (nice; its job runner goes 10 lower
   * still). Intake first: on a machine the worker saturates, webhooks are still answered at once, while
   * the 👀 and permission checks the worker does wait a little (GitHub's pacing of writes makes them wait anyway).
   */
  niceness?: number;
}

/**
 * The embedded queue as `npm start` runs it: intake claims the delivery, answers, mints the job's
 * narrowed token and hands job and token to a forked local worker over IPC (in memory only). The
 * worker keeps the thread lanes and the BLUEPRINT_CONCURRENCY cap; the intake's event loop runs no job.
 */
export class LocalWorkerBackend implements JobBackend {
  private readonly recent = new RecentKeys();
  private readonly worker: SupervisedChild<ToWorker, FromWorker>;
  private readonly answers = new PendingAnswers();
  private readonly handing = new Set<Promise<void>>();
  /** Jobs handed over and not finished: a fresh worker takes them over if this one dies. */
  private readonly inFlight = new Map<string, InFlight>();

  constructor(private readonly options: LocalWorkerOptions) {
    const env = withoutIntakeSecrets(options.env ?? process.env);
    this.worker = new SupervisedChild<ToWorker, FromWorker>({
      entry: options.entry,
      env,
      messages: fromWorkerSchema,
      // The worker signs and checks the hidden plan state with the key the App derives (from
      // BLUEPRINT_STATE_SECRET or the webhook secret), handed over in memory: never the secret itself.
      hello: { type: "start", stateKey: options.stateKey.toString("base64") },
      onMessage: (message) => this.receive(message),
      forked: (child) => lowerPriority(child, options.niceness ?? WORKER_NICENESS, options.log, "the local worker"),
      onRestart: ({ code, signal, restartInMs, wasReady }) => {
        options.log.error({ code, signal, restartInMs, wasReady, jobs: this.inFlight.size }, "the local worker stopped; starting another to take its jobs over");
        if (!wasReady) return;
        this.answers.dropAll();
        this.handOver();
      },
    });
  }

  async submit({ job, keys }: Accepted): Promise<boolean> {
    if (!this.recent.claim(keys)) return false;
    // The webhook is answered now; the token is minted (or reused) and the job handed over after.
    const handing = this.options.tokens
      .forJob(job)
      .then(async (token) => {
        await this.worker.ready;
        this.inFlight.set(job.deliveryId, { job, keys, token, triaged: false, crashes: 0 });
        trimOldest(this.inFlight, 20_000);
        this.send({ type: "job", job, keys, token });
      })
      .catch((error: unknown) => {
        this.recent.release(keys);
        this.options.log.error({ err: error, deliveryId: job.deliveryId }, "could not hand a job to the local worker");
      });
    this.handing.add(handing);
    void handing.finally(() => this.handing.delete(handing));
    return true;
  }

  async removeRepositories(removal: Removal): Promise<void> {
    // Not handed to a fresh worker should this one die: they are dropped.
    for (const [deliveryId, entry] of this.inFlight) if (removalCovers(removal, entry.job)) this.inFlight.delete(deliveryId);
    // Not awaited: the webhook is answered while a restarting worker comes up.
    void this.worker.ready.then(() => this.send({ type: "remove", removal }));
  }

  async stats(): Promise<QueueStats> {
    return (await this.ask("stats")) as QueueStats;
  }

  /** The worker's Prometheus metrics as JSON, for /metrics to add to the intake's. */
  async workerMetrics(): Promise<unknown> {
    return this.ask("metrics");
  }

  async idle(): Promise<void> {
    while (this.handing.size > 0) await Promise.allSettled([...this.handing]);
    await this.ask("idle");
  }

  async shutdown(reason: string, timeoutMs: number): Promise<void> {
    this.worker.stopSupervising();
    await Promise.allSettled([...this.handing]);
    await this.worker.stop({ type: "shutdown", reason, timeoutMs: Math.max(0, timeoutMs - 1_000) }, timeoutMs);
  }

  private receive(message: Exclude<FromWorker, { type: "ready" }>): void {
    if (message.type === "release") this.recent.release(message.keys);
    else if (message.type === "token-request") this.refresh(message.id, message.job);
    else if (message.type === "settled") {
      if (message.phase === "finished") this.inFlight.delete(message.deliveryId);
      else if (this.inFlight.has(message.deliveryId)) this.inFlight.get(message.deliveryId)!.triaged = true;
    } else this.answers.answer(message.id, message.value);
  }

  /** A fresh token for a job that waited long (reused from the cache only while it has 40 minutes left). */
  private refresh(id: number, job: Job): void {
    this.options.tokens.forJob(job).then(
      (token) => {
        const entry = this.inFlight.get(job.deliveryId);
        if (entry) entry.token = token;
        this.send({ type: "token", id, deliveryId: job.deliveryId, token });
      },
      (error: unknown) => {
        this.options.log.error({ err: error, deliveryId: job.deliveryId }, "could not mint a fresh token for a job that waited long");
        this.send({ type: "token", id, deliveryId: job.deliveryId, token: null });
      },
    );
  }

  /**
   * After a worker died: its unfinished jobs go to the fresh one, in arrival order — triaged ones
   * straight onto their lanes (resumed from what was pushed), the others triaged again. A job whose
   * workers keep dying is dropped, its claim released so a redelivery of its webhook is handled.
   */
  private handOver(): void {
    for (const [deliveryId, entry] of [...this.inFlight].sort((a, b) => a[1].job.receivedAt - b[1].job.receivedAt)) {
      entry.crashes++;
      if (entry.crashes >= MAX_CRASHES) {
        this.inFlight.delete(deliveryId);
        this.recent.release(entry.keys);
        this.options.log.error({ deliveryId, crashes: entry.crashes }, "dropping a job whose local workers keep stopping; a redelivery of its webhook starts it again");
        continue;
      }
      void this.worker.ready.then(() => this.send({ type: entry.triaged ? "resume" : "job", job: entry.job, keys: entry.keys, token: entry.token }));
    }
  }

  private send(message: ToWorker): void {
    // Checked on arrival by the worker (toWorkerSchema); typed here.
    this.worker.send(message);
  }

  private async ask(what: "stats" | "idle" | "metrics"): Promise<unknown> {
    await this.worker.ready;
    const { id, answer } = this.answers.ask();
    this.send({ type: "ask", id, what });
    return answer;
  }
}

