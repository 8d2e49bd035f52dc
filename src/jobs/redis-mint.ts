import { Queue, UnrecoverableError, Worker, type Job as BullJob } from "bullmq";
import type { Redis } from "ioredis";
import { sealToken, type JobTokenSource, type Sealer } from "../credentials/index.js";
import type { Logger } from "../shared/logger.js";
import type { Job } from "./job.js";
import { bullId, JOB_OPTIONS, signWire, TRIAGE_QUEUE, verifiedOrFailed, wireSchema } from "./job-wire.js";
import type { RedisStore } from "./store/redis.js";

/** Accepted webhooks waiting for their token: only processes that hold the App's key (intakes) work this queue. */
const MINT_QUEUE = "blueprint-mint";
export const MINT_CONCURRENCY = 64;
/**
 * How long an installation's first commands wait in the mint queue before any intake mints them: the
 * intake that took them mints at once and removes them from there; the queue is for an intake that stopped first.
 */
const FALLBACK_MS = 15_000;
/**
 * How many of an installation's pending commands its intake hands on at once: a few, not one, as its
 * first may be refused without a 👀 (someone who may not command us), and its first 👀 is the next's.
 */
const HANDED_ON_AT_ONCE = 3;
/** BullMQ's highest priority number (the lowest priority). */
const LAST_PRIORITY = 2 ** 21;

/**
 * Triage takes the installations' commands in turns (the Redis store's `claim`): every installation's
 * first pending command before any installation's second, so one busy installation's 👀 never wait
 * behind another's; an installation's own commands keep their order (their turns only grow). BullMQ
 * runs a job with no priority before any with one: every triage job has one.
 */
const priorityOf = (turn: number) => Math.min(Math.max(1, Math.floor(turn)), LAST_PRIORITY);

export interface MintingOptions {
  connection: Redis;
  store: RedisStore;
  sealer: Sealer;
  log: Logger;
  tokens: JobTokenSource;
  lockMs: number;
  /** How long the queued copy waits for its intake's own hand-on (15 s; tests shorten it). */
  fallbackMs?: number;
}

/**
 * An intake's part between a webhook accepted and its job in the workers' triage queue: the job's
 * token minted (with the App's key, only for a job an intake signed) and sealed into it.
 *
 * Every accepted webhook is in Redis before its webhook is answered. An installation's first pending
 * commands (HANDED_ON_AT_ONCE) the intake that took them then hands on at once, off the response path: not
 * through the mint queue's BullMQ worker, which fetches one job per round trip to Redis, each waiting
 * behind the burst's webhooks on the intake's event loop (the load bench: 0.8–0.9 s in the mint queue
 * for every job, an installation's first included). Later commands wait their turn in the mint queue:
 * handing every command on at once took the intake's CPU from answering the burst (webhook p99
 * 0.7 s against 0.1–0.4 s). What an intake could not hand on (it stopped first, GitHub refused the
 * token) its queued copy brings to any intake's minter later, with retries.
 */
export class Minting {
  /** The accepted webhooks no intake has handed on yet (at /healthz, waiting). */
  readonly queue: Queue;
  private readonly minter: Worker;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly options: MintingOptions) {
    const { connection, lockMs } = options;
    this.queue = new Queue(MINT_QUEUE, { connection });
    this.minter = new Worker(MINT_QUEUE, (bullJob: BullJob) => this.mintQueued(bullJob), {
      connection,
      concurrency: MINT_CONCURRENCY,
      lockDuration: lockMs,
      stalledInterval: lockMs,
    });
    this.minter.on("failed", (bullJob, error) => this.givenUp(bullJob, error));
    this.minter.on("error", (error) => options.log.error({ err: error }, "queue worker error"));
  }

  /**
   * The accepted webhook queued in Redis (resolves once it is there); one of an installation's first, then handed on to
   * triage without waiting for it.
   */
  async accept(job: Job, keys: string[], turn: number): Promise<void> {
    const id = bullId("m", job.deliveryId);
    const wire = signWire(this.options.sealer, { queue: MINT_QUEUE, id }, { job, keys });
    const atOnce = turn <= HANDED_ON_AT_ONCE;
    const delay = atOnce ? { delay: this.options.fallbackMs ?? FALLBACK_MS } : {};
    await this.queue.add(job.kind, wire, {
      ...JOB_OPTIONS,
      // Not kept once minted or given up: BullMQ adds nothing under the id of a job it holds, and GitHub's redelivery
      // of this webhook (its claim released by a triage or a minter that could not go on) comes under the same id.
      removeOnComplete: true,
      removeOnFail: true,
      attempts: 5,
      backoff: { type: "exponential", delay: 1_000 },
      jobId: id,
      priority: priorityOf(turn),
      ...delay,
    });
    if (!atOnce) return;
    const handing = this.handOnNow(job, keys, id, turn);
    this.inFlight.add(handing);
    void handing.finally(() => this.inFlight.delete(handing));
  }

  async close(): Promise<void> {
    await Promise.all(this.inFlight);
    await this.minter.close();
    await this.queue.close();
  }

  /** This intake's own hand-on; on any failure the queued copy is left to a minter (logged). */
  private async handOnNow(job: Job, keys: string[], mintId: string, turn: number): Promise<void> {
    try {
      await this.handOn(job, keys, turn);
      // A minter that took the queued copy meanwhile (this took longer than its wait) finds its triage job added:
      // BullMQ adds no job twice under one id.
      await this.queue.remove(mintId);
    } catch (error) {
      this.options.log.warn(
        { err: error, deliveryId: job.deliveryId },
        "could not hand an accepted webhook on to triage at once; its queued copy is minted later",
      );
    }
  }

  /** The job with its token sealed in, on the workers' triage queue in its installation's turn. */
  private async handOn(job: Job, keys: string[], turn: number): Promise<void> {
    const { sealer, store } = this.options;
    const token = await this.options.tokens.forJob(job);
    const id = bullId("t", job.deliveryId);
    await store.triageQueue.add(
      job.kind,
      signWire(sealer, { queue: TRIAGE_QUEUE, id }, { job, keys, sealedToken: sealToken(sealer, token, job) }),
      { ...JOB_OPTIONS, jobId: id, priority: priorityOf(turn) },
    );
  }

  /** A queued copy: its intake did not hand it on. Its turn is its priority. */
  private async mintQueued(bullJob: BullJob): Promise<void> {
    // The accepted webhook, as an intake signed it for the mint queue.
    const place = { queue: MINT_QUEUE, id: bullJob.id ?? "" };
    const { job, keys } = verifiedOrFailed(
      this.options.sealer,
      this.options.log,
      place,
      bullJob.data,
      "no token minted",
    );
    await this.handOn(job, keys, bullJob.opts.priority ?? LAST_PRIORITY);
  }

  /** No token after every retry: the claim forgotten, so GitHub's redelivery of this webhook is handled. */
  private givenUp(bullJob: BullJob | undefined, error: Error): void {
    if (!bullJob || bullJob.attemptsMade < (bullJob.opts.attempts ?? 1)) return;
    if (error instanceof UnrecoverableError) return;
    const parsed = wireSchema.safeParse(bullJob.data);
    this.options.log.error(
      { err: error, deliveryId: parsed.success ? parsed.data.job.deliveryId : bullJob.id },
      "could not get an installation token for a job",
    );
    if (parsed.success) void forgetClaim(this.options.store, this.options.log, parsed.data.keys, parsed.data.job);
  }
}

/**
 * Forgets a delivery's claim and its place among its installation's pending commands; if Redis will
 * not, GitHub's redelivery of it is taken for a duplicate until the claim expires: logged.
 */
export async function forgetClaim(
  store: RedisStore,
  log: Logger,
  keys: readonly string[],
  job: Pick<Job, "deliveryId" | "installationId">,
): Promise<void> {
  await Promise.all([store.release(keys), store.triaged(job.installationId)]).catch((error: unknown) =>
    log.warn(
      { err: error, deliveryId: job.deliveryId },
      "could not forget a delivery's claim in Redis; a redelivery of it may be taken for a duplicate",
    ),
  );
}
