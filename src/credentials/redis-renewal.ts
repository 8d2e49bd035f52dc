import { Job as BullJob, Queue, QueueEvents, UnrecoverableError, Worker } from "bullmq";
import { Redis } from "ioredis";
import { z } from "zod";
import { expiresSoon, type CredentialsLog, type JobTokenSource, type TokenHolder } from "./job-token.js";
import type { Sealer } from "./sealed.js";
import { jobLifetimeMs, openToken, QUEUE_LIFE_MS, sealToken } from "./sealed-token.js";

/** Workers' requests for a fresh job token; only intakes (which hold the App's key) answer them. */
const TOKEN_QUEUE = "blueprint-token";
/** How long a worker waits for an intake to answer before putting the job back for later. */
const ANSWER_WAIT_MS = 60_000;
/**
 * At most one token is minted per delivery in this long. A job asks when its token has 10 minutes left, and the token it
 * gets has 40 minutes or more (`ReusedTokens`), so a job's renewals are half an hour apart; one whose answer was lost
 * asks again a minute later and gets its token within the 10 minutes it had.
 */
const RENEWAL_SPACING_MS = 5 * 60_000;
const renewedKey = (deliveryId: string) => `blueprint:renewed:${deliveryId}`;
/**
 * A request names a running job by where it is (queue and BullMQ id) and the lock its worker holds,
 * and carries the job's sealed token. The intake reads the job itself from Redis: nothing in the
 * request says what a fresh token is for.
 */
const requestSchema = z.object({
  queue: z.string().min(1),
  id: z.string().min(1),
  lockToken: z.string().min(1),
  sealedToken: z.string(),
});
export type TokenRequest = z.output<typeof requestSchema>;

/** No intake answered (none running, or GitHub refused the token): the job waits and asks again later. */
export class TokenUnavailable extends Error {
  constructor(readonly reason: unknown) {
    super(`could not get a fresh installation token: ${reason instanceof Error ? reason.message : String(reason)}`);
  }
}

const REFUSED = "refused: ";

/**
 * Why an intake renews no token for a request: the job is not one that runs now, in its lifetime,
 * with that token. Not retried, and the worker that asked fails the job rather than ask again.
 */
export class RefreshRefused extends UnrecoverableError {
  constructor(reason: string) {
    super(`${REFUSED}${reason}`);
  }
}

/** `read()`, any failure a refusal: a job or token that does not verify now never will. */
function refusing<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw new RefreshRefused(error instanceof Error ? error.message : String(error));
  }
}

/** Where a job sits in Redis: its queue and BullMQ id. */
interface QueuePlace {
  queue: string;
  id: string;
}

export interface TokenDeskOptions {
  connection: Redis;
  tokens: JobTokenSource;
  sealer: Sealer;
  log: CredentialsLog;
  /** The queues whose running jobs may ask (triage and lane work); a request naming another is refused. */
  queues: readonly string[];
  /** The job at `place` as an intake or worker signed it there (jobs/job-wire.ts); throws for anything else. */
  verifiedJob(place: QueuePlace, data: unknown): TokenHolder;
  /**
   * How the job at `place` has run, as its workers recorded it: whether it has ended (done, failed or dropped), and
   * when it first started on its thread as its worker signed it (null when none did: triage, or lane work waiting).
   */
  runOf(place: QueuePlace, job: TokenHolder): Promise<{ ended: boolean; startedAt: number | null }>;
  concurrency: number;
  /** The agent's wall time per run (BLUEPRINT_MAX_MINUTES): a job's lifetime is measured in it (`jobLifetimeMs`). */
  maxWallTimeMs: number;
}

/**
 * Intake's side: answers workers' token requests with a token minted as for a new job (narrowed to the
 * job's repository and kind), sealed for that job. Anyone who can write to Redis can ask, so a token
 * is renewed only for a job that is running now (BullMQ's `active`, its lock held by the asker), that
 * an intake or worker signed, that has not ended before, within its lifetime (from its first start as its
 * worker signed it), whose token was sealed for it, and at most once per RENEWAL_SPACING_MS per delivery. The answer
 * is BullMQ's return value, kept in Redis for minutes: sealed, like the job's own, and bound to the job.
 */
export function answerTokenRequests(options: TokenDeskOptions): { close(): Promise<void> } {
  const { connection, sealer } = options;
  const queues = new Map(options.queues.map((name) => [name, new Queue(name, { connection })]));

  const runningJob = async (request: TokenRequest): Promise<TokenHolder> => {
    const place: QueuePlace = { queue: request.queue, id: request.id };
    const queue = queues.get(request.queue);
    const queued = queue ? await BullJob.fromId(queue, request.id) : undefined;
    if (!queue || !queued) throw new RefreshRefused(`no job ${request.id} in ${request.queue}`);
    const state = await queued.getState();
    if (state !== "active")
      throw new RefreshRefused(`job ${request.id} is ${state}, not running: its token is not renewed`);
    if ((await connection.get(queue.toKey(`${request.id}:lock`))) !== request.lockToken)
      throw new RefreshRefused(`job ${request.id} is not held by the worker that asked`);
    const job = refusing(() => options.verifiedJob(place, queued.data));
    const run = await options.runOf(place, job);
    if (run.ended) throw new RefreshRefused(`job ${request.id} has already run: its token is not renewed`);
    const lifetime = jobLifetimeMs(job, options.maxWallTimeMs);
    const now = Date.now();
    // From its first start as its worker signed it: BullMQ's `processedOn` is in Redis for anyone to set.
    const started = run.startedAt ?? queued.processedOn ?? 0;
    if (now - started > lifetime || now - job.receivedAt > QUEUE_LIFE_MS + lifetime) {
      throw new RefreshRefused(
        `job ${request.id} has run past its lifetime (${Math.round(lifetime / 60_000)} min): its token is not renewed`,
      );
    }
    return job;
  };

  const worker = new Worker(
    TOKEN_QUEUE,
    async (request: BullJob) => {
      const parsed = requestSchema.parse(request.data);
      // As malformed as a request of another shape: only the queues of running jobs are asked about.
      if (!queues.has(parsed.queue))
        throw new Error(`a token request named queue ${parsed.queue}, not one of ${options.queues.join(", ")}`);
      const job = await runningJob(parsed);
      // Sealed for this job, or it is not this job's token to renew.
      refusing(() => openToken(sealer, parsed.sealedToken, job));
      return sealToken(sealer, await spaced(connection, job, () => options.tokens.forJob(job)), job);
    },
    { connection, concurrency: options.concurrency },
  );
  worker.on("failed", (request, error) =>
    options.log.warn({ err: error, request: request?.id }, "a token request was refused"),
  );
  worker.on("error", (error) => options.log.error({ err: error }, "token request worker error"));
  return {
    async close() {
      await worker.close();
      await Promise.all([...queues.values()].map((queue) => queue.close()));
    },
  };
}

/**
 * `mint()` unless a token was minted for the job's delivery less than RENEWAL_SPACING_MS ago (refused: one put back in
 * Redis to look running cannot have tokens minted over and over). A mint that fails does not count.
 */
async function spaced<T>(connection: Redis, job: TokenHolder, mint: () => Promise<T>): Promise<T> {
  const key = renewedKey(job.deliveryId);
  if ((await connection.set(key, String(Date.now()), "PX", RENEWAL_SPACING_MS, "NX")) !== "OK")
    throw new RefreshRefused(
      `a token was renewed for delivery ${job.deliveryId} less than ${RENEWAL_SPACING_MS / 60_000} minutes ago`,
    );
  try {
    return await mint();
  } catch (error) {
    await connection.del(key).catch(() => undefined);
    throw error;
  }
}

/**
 * A worker's side: a job that waited in the queue longer than its token lives (an hour on GitHub), or
 * that works longer, gets a fresh one before it touches GitHub. Workers hold no App key, so they ask
 * the intakes through Redis.
 */
export class TokenRefresher {
  private readonly requests: Queue;
  private readonly answers: QueueEvents;

  private constructor(
    redisUrl: string,
    connection: Redis,
    private readonly sealer: Sealer,
  ) {
    this.requests = new Queue(TOKEN_QUEUE, { connection });
    // Answers are read from BullMQ's event stream with a blocking read: a connection of its own.
    this.answers = new QueueEvents(TOKEN_QUEUE, { connection: new Redis(redisUrl, { maxRetriesPerRequest: null }) });
  }

  static async start(redisUrl: string, connection: Redis, sealer: Sealer): Promise<TokenRefresher> {
    const refresher = new TokenRefresher(redisUrl, connection, sealer);
    await refresher.answers.waitUntilReady();
    return refresher;
  }

  /**
   * The running `job`'s `sealedToken` as it is if it has TOKEN_MARGIN_MS left, else a fresh one sealed;
   * throws TokenUnavailable. `running`: where the job is and the lock this worker holds on it.
   */
  async fresh(
    job: Omit<TokenHolder, "receivedAt">,
    sealedToken: string,
    running: QueuePlace & { lockToken: string },
  ): Promise<{ sealedToken: string; refreshed: boolean }> {
    const token = openToken(this.sealer, sealedToken, job);
    if (!expiresSoon(token)) return { sealedToken, refreshed: false };
    try {
      const request: TokenRequest = { queue: running.queue, id: running.id, lockToken: running.lockToken, sealedToken };
      const asked = await this.requests.add("refresh", request, {
        attempts: 3,
        backoff: { type: "exponential", delay: 1_000 },
        removeOnComplete: { age: 300 },
        removeOnFail: { age: 300 },
      });
      const answer = z.string().parse(await asked.waitUntilFinished(this.answers, ANSWER_WAIT_MS));
      openToken(this.sealer, answer, job);
      return { sealedToken: answer, refreshed: true };
    } catch (error) {
      if (error instanceof Error && error.message.startsWith(REFUSED))
        throw new RefreshRefused(error.message.slice(REFUSED.length));
      throw new TokenUnavailable(error);
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.requests.close(), this.answers.close()]);
  }
}
