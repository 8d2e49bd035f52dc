import { Queue, QueueEvents, Worker, type Job as BullJob } from "bullmq";
import { Redis } from "ioredis";
import { z } from "zod";
import { expiresSoon, jobTokenSchema, type JobToken, type JobTokenSource } from "../github/job-token.js";
import type { Logger } from "../workflow/deps.js";
import { jobSchema, type Job } from "./job.js";
import type { Sealer } from "./sealed.js";

/** Workers' requests for a fresh job token; only intakes (which hold the App's key) answer them. */
const TOKEN_QUEUE = "blueprint-token";
/** How long a worker waits for an intake to answer before putting the job back for later. */
const ANSWER_WAIT_MS = 60_000;
/** A request names the job (for the logs) and carries the job's sealed token, which alone says what a fresh one is for. */
const requestSchema = z.object({ job: jobSchema, sealedToken: z.string() });

/**
 * What a sealed job token is for: the installation, repository and job kind it was minted for.
 * Sealed with the token, so only an intake sets it; a refresh mints for this scope alone, never for
 * whatever repository a request in Redis names.
 */
export const tokenScopeSchema = z.object({ installationId: z.number().int(), repository: z.string().min(1), kind: z.string() });
export type TokenScope = z.output<typeof tokenScopeSchema>;
const scopedTokenSchema = jobTokenSchema.extend({ scope: tokenScopeSchema.optional() });

export function scopeOf(job: Job): TokenScope {
  return { installationId: job.installationId, repository: job.repository.name, kind: job.kind };
}

/** `token` sealed with the scope it was minted for. */
export function sealToken(sealer: Sealer, token: JobToken, scope: TokenScope): string {
  return sealer.seal(JSON.stringify({ ...token, scope }));
}

/**
 * A sealed token opened for `job`: refused when it was sealed for another installation or repository
 * (a token moved onto another job in Redis). Tokens sealed before scopes were recorded carry none.
 */
export function openToken(sealer: Sealer, sealedToken: string, job: Job): JobToken & { scope?: TokenScope | undefined } {
  const opened = scopedTokenSchema.parse(JSON.parse(sealer.open(sealedToken)));
  if (opened.scope && (opened.scope.installationId !== job.installationId || opened.scope.repository !== job.repository.name)) {
    throw new Error(`the job's token was sealed for another repository (${opened.scope.repository}), not ${job.repository.name}`);
  }
  return opened;
}

/** No intake answered (none running, or GitHub refused the token): the job waits and asks again later. */
export class TokenUnavailable extends Error {
  constructor(readonly reason: unknown) {
    super(`could not get a fresh installation token: ${reason instanceof Error ? reason.message : String(reason)}`);
  }
}

/**
 * Intake's side: answers workers' token requests with a token minted as for a new job (narrowed to the
 * job's repository and kind), sealed. The answer is BullMQ's return value, stored in Redis: sealed, like the job's own.
 */
export function answerTokenRequests(options: { connection: Redis; tokens: JobTokenSource; sealer: Sealer; log: Logger; concurrency: number }): Worker {
  const worker = new Worker(
    TOKEN_QUEUE,
    async (request: BullJob) => {
      const { job, sealedToken } = requestSchema.parse(request.data);
      // Anyone who can write to Redis can ask: only a token an intake sealed for this job's repository is renewed, for what it was minted for.
      const { scope } = openToken(options.sealer, sealedToken, job);
      if (!scope) throw new Error("the job's token was sealed without its scope: it is not renewed");
      const token = await options.tokens.forJob({ installationId: scope.installationId, repository: { name: scope.repository }, kind: scope.kind as Job["kind"] });
      return sealToken(options.sealer, token, scope);
    },
    { connection: options.connection, concurrency: options.concurrency },
  );
  worker.on("error", (error) => options.log.error({ err: error }, "token request worker error"));
  return worker;
}

/**
 * A worker's side: a job that waited in the queue longer than its token lives (an hour on GitHub) gets
 * a fresh one before it touches GitHub. Workers hold no App key, so they ask the intakes through Redis.
 */
export class TokenRefresher {
  private readonly requests: Queue;
  private readonly answers: QueueEvents;

  private constructor(redisUrl: string, connection: Redis, private readonly sealer: Sealer) {
    this.requests = new Queue(TOKEN_QUEUE, { connection });
    // Answers are read from BullMQ's event stream with a blocking read: a connection of its own.
    this.answers = new QueueEvents(TOKEN_QUEUE, { connection: new Redis(redisUrl, { maxRetriesPerRequest: null }) });
  }

  static async start(redisUrl: string, connection: Redis, sealer: Sealer): Promise<TokenRefresher> {
    const refresher = new TokenRefresher(redisUrl, connection, sealer);
    await refresher.answers.waitUntilReady();
    return refresher;
  }

  /** `sealedToken` as it is if it has TOKEN_MARGIN_MS left, else a fresh one sealed; throws TokenUnavailable. */
  async fresh(job: Job, sealedToken: string): Promise<{ sealedToken: string; refreshed: boolean }> {
    const token = openToken(this.sealer, sealedToken, job);
    if (!expiresSoon(token)) return { sealedToken, refreshed: false };
    try {
      const request = await this.requests.add("refresh", { job, sealedToken }, { attempts: 3, backoff: { type: "exponential", delay: 1_000 }, removeOnComplete: { age: 300 }, removeOnFail: { age: 3600 } });
      const answer = z.string().parse(await request.waitUntilFinished(this.answers, ANSWER_WAIT_MS));
      openToken(this.sealer, answer, job);
      return { sealedToken: answer, refreshed: true };
    } catch (error) {
      throw new TokenUnavailable(error);
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.requests.close(), this.answers.close()]);
  }
}
