import type { JobToken, JobTokenSource } from "../credentials/index.js";
import type { Logger } from "../shared/logger.js";
import type { JobBackend, QueueStats } from "./backend.js";
import type { Accepted } from "./from-webhook.js";
import { removalCovers, type Job, type Removal } from "./job.js";
import { fromLocalWorkerSchema, type FromLocalWorker, type ToLocalWorker } from "./protocol.js";
import { Claims } from "./store/memory.js";
import { SupervisedChild, WORKER_NICENESS } from "./supervised-child.js";
import { answerTokenRequest } from "./token-relay.js";

/** A job handed to the local worker and not finished: a fresh worker takes it over if this one dies. */
interface InFlight {
  job: Job;
  keys: string[];
  token: JobToken;
  /** The worker acknowledged it and queued it on its thread. */
  triaged: boolean;
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
 * The local (no Redis) backend as `npm start` runs it: intake claims the delivery, answers, mints the job's
 * narrowed token and hands job and token to a forked local worker over IPC (in memory only). The
 * worker keeps the thread lanes and the BLUEPRINT_CONCURRENCY cap; the intake's event loop runs no job.
 */
export class LocalWorkerBackend implements JobBackend {
  private readonly recent = new Claims();
  private readonly worker: SupervisedChild<ToLocalWorker, FromLocalWorker, InFlight>;
  private readonly handing = new Set<Promise<void>>();

  constructor(private readonly options: LocalWorkerOptions) {
    this.worker = new SupervisedChild<ToLocalWorker, FromLocalWorker, InFlight>({
      entry: options.entry,
      env: withoutIntakeSecrets(options.env ?? process.env),
      name: "the local worker",
      log: options.log,
      messages: fromLocalWorkerSchema,
      // The worker signs and checks the hidden plan state with the key the App derives (from
      // BLUEPRINT_STATE_SECRET or the webhook secret), handed over in memory: never the secret itself.
      hello: { type: "start", stateKey: options.stateKey.toString("base64") },
      niceness: options.niceness ?? WORKER_NICENESS,
      onMessage: (message) => this.receive(message),
      work: {
        maxCrashes: MAX_CRASHES,
        limit: 20_000,
        onHandOver: (jobs) => this.handOver(jobs),
        onDrop: ({ job, keys }, crashes) => {
          this.recent.release(keys);
          options.log.error(
            { deliveryId: job.deliveryId, crashes },
            "dropping a job whose local workers keep stopping; a redelivery of its webhook starts it again",
          );
        },
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
        this.worker.track(job.deliveryId, { job, keys, token, triaged: false });
        this.worker.send({ type: "job", job, keys, token });
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
    this.worker.settleWhere((entry) => removalCovers(removal, entry.job));
    // Not awaited: the webhook is answered while a restarting worker comes up.
    void this.worker.ready.then(() => this.worker.send({ type: "remove", removal }));
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

  private receive(message: Exclude<FromLocalWorker, { type: "ready" | "answer" }>): void {
    if (message.type === "release") this.recent.release(message.keys);
    else if (message.type === "token-request") this.refresh(message.id, message.deliveryId);
    else if (message.phase === "finished") this.worker.settle(message.deliveryId);
    else {
      const entry = this.worker.tracked(message.deliveryId);
      if (entry) entry.triaged = true;
    }
  }

  /**
   * A fresh token for a job that waited long (reused from the cache only while it has 40 minutes left): only for a job
   * handed to the worker and not finished.
   */
  private refresh(id: number, deliveryId: string): void {
    const entry = this.worker.tracked(deliveryId);
    void answerTokenRequest(
      { id, deliveryId },
      entry,
      async () => (entry ? this.options.tokens.forJob(entry.job) : null),
      (answer) => this.worker.send(answer),
      this.options.log,
    );
  }

  /**
   * After a worker died: its unfinished jobs go to the fresh one, in arrival order — triaged ones
   * straight onto their lanes (resumed from what was pushed), the others triaged again. (A job whose
   * workers keep dying was dropped, its claim released so a redelivery of its webhook is handled.)
   */
  private handOver(jobs: InFlight[]): void {
    for (const { job, keys, token, triaged } of jobs.sort((a, b) => a.job.receivedAt - b.job.receivedAt)) {
      this.worker.send({ type: triaged ? "resume" : "job", job, keys, token });
    }
  }

  private ask(what: "stats" | "idle" | "metrics"): Promise<unknown> {
    // Checked on arrival by the worker (toLocalWorkerSchema); typed here.
    return this.worker.ask((id) => ({ type: "ask", id, what }));
  }
}
