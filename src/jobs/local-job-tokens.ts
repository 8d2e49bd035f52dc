import { expiresSoon, type JobToken } from "../credentials/index.js";
import type { Logger } from "../shared/logger.js";
import { trimOldest } from "../shared/bounded-map.js";
import type { Job } from "./job.js";
import type { FromLocalWorker as FromWorker } from "./protocol.js";
import { PendingAnswers } from "./pending-answers.js";

/** How long the local worker waits for the intake's fresh token before working with the one it has. */
const ANSWER_WAIT_MS = 60_000;
/** Tokens kept at most (the oldest dropped first): jobs long gone do not pile up. */
const KEPT_TOKENS = 20_000;

/**
 * The local worker's job tokens, as the intake sent them with each job. A job that waited long on its
 * thread (behind a long build, say) gets a fresh token from the intake first, and so does one whose
 * token runs low while it works (its job runner asks).
 */
export class LocalJobTokens {
  private readonly tokens = new Map<string, JobToken>();
  /** Asked about the job's delivery id: see `answer`. */
  private readonly answers = new PendingAnswers<JobToken>();

  constructor(
    private readonly send: (message: FromWorker) => void,
    private readonly log: Logger,
  ) {}

  keep(deliveryId: string, token: JobToken): void {
    this.tokens.set(deliveryId, token);
    trimOldest(this.tokens, KEPT_TOKENS);
  }

  tokenFor(job: Job): JobToken {
    const token = this.tokens.get(job.deliveryId);
    if (!token) throw new Error(`no token for delivery ${job.deliveryId}`);
    return token;
  }

  /** The job's token, or a fresh one from the intake when it expires soon (the old one if none came). */
  async fresh(job: Job): Promise<JobToken> {
    const token = this.tokenFor(job);
    if (!expiresSoon(token)) return token;
    const { id, answer } = this.answers.ask(ANSWER_WAIT_MS, job.deliveryId);
    this.send({ type: "token-request", id, deliveryId: job.deliveryId });
    const fresh = await answer;
    if (!fresh) {
      this.log.warn({ deliveryId: job.deliveryId, expiresAt: token.expiresAt }, "no fresh token for a job that waited long; it works with the one it has");
      return token;
    }
    this.log.info({ deliveryId: job.deliveryId }, "the job's token was about to expire: the intake sent a fresh one");
    this.tokens.set(job.deliveryId, fresh);
    return fresh;
  }

  /** The intake's answer to request `id`, taken only if it is for the same delivery (see protocol.ts). */
  answer(id: number, deliveryId: string, token: JobToken | null): void {
    this.answers.answer(id, token, deliveryId);
  }
}
