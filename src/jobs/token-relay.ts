import { expiresSoon, fresherThan, type JobToken } from "../credentials/index.js";
import { trimOldest } from "../shared/bounded-map.js";
import type { Logger } from "../shared/logger.js";
import type { Job } from "./job.js";
import { PendingAnswers } from "./pending-answers.js";

/** A child's question for a job's fresh token, and its parent's answer (protocol.ts's "token-request" and "token"). */
type TokenRequest = { type: "token-request"; id: number; deliveryId: string };
type TokenAnswer = { type: "token"; id: number; deliveryId: string; token: JobToken | null };

/**
 * The one token relay between processes: a child (the local worker, a job runner) asks its parent for
 * a job's fresh token by the job's delivery; the parent, which holds the key or asks its own parent,
 * answers with one or null. Only the parent's holder of the App's key mints.
 */
export class TokenAsker {
  /** Asked about the job's delivery: an answer meant for a predecessor's question of the same number is not taken. */
  private readonly answers = new PendingAnswers<JobToken>();

  constructor(
    private readonly send: (request: TokenRequest) => void,
    /** How long a question waits for its answer before it counts as none. */
    private readonly waitMs: number,
  ) {}

  /** A fresh token for the job of `deliveryId`, or null when none came in time. */
  ask(deliveryId: string): Promise<JobToken | null> {
    const { id, answer } = this.answers.ask(this.waitMs, deliveryId);
    this.send({ type: "token-request", id, deliveryId });
    return answer;
  }

  /** The parent's answer, taken only if it is for the same delivery. */
  answer({ id, deliveryId, token }: Omit<TokenAnswer, "type">): void {
    this.answers.answer(id, token, deliveryId);
  }
}

/**
 * The parent's side: a fresh token (`fresh`) for a job it handed over and still holds (`held`), kept
 * there when it is fresher, and sent; null for anything else, or when none could be had.
 */
export async function answerTokenRequest(
  request: Omit<TokenRequest, "type">,
  held: { token: JobToken } | undefined,
  fresh: () => Promise<JobToken | null>,
  send: (answer: TokenAnswer) => void,
  log: Logger,
  renewed?: string,
): Promise<void> {
  const { id, deliveryId } = request;
  const token = await (
    held ? fresh() : Promise.reject(new Error("asked for the token of a job it was not handed"))
  ).catch((error: unknown) => {
    log.warn({ err: error, deliveryId }, "could not get a fresh token for a job");
    return null;
  });
  if (held && token && fresherThan(token, held.token)) {
    held.token = token;
    if (renewed) log.info({ deliveryId }, renewed);
  }
  send({ type: "token", id, deliveryId, token });
}

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

  constructor(
    readonly asker: TokenAsker,
    private readonly log: Logger,
  ) {}

  static fromIntake(send: (request: TokenRequest) => void, log: Logger): LocalJobTokens {
    return new LocalJobTokens(new TokenAsker(send, ANSWER_WAIT_MS), log);
  }

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
    const fresh = await this.asker.ask(job.deliveryId);
    if (!fresh) {
      this.log.warn(
        { deliveryId: job.deliveryId, expiresAt: token.expiresAt },
        "no fresh token for a job that waited long; it works with the one it has",
      );
      return token;
    }
    this.log.info({ deliveryId: job.deliveryId }, "the job's token was about to expire: the intake sent a fresh one");
    this.tokens.set(job.deliveryId, fresh);
    return fresh;
  }
}
