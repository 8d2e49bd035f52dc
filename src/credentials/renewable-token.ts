import type { GrantedToken, TokenGetter } from "../shared/token-getter.js";
import { expiresSoon, fresherThan, type JobToken, type TokenHolder } from "./job-token.js";

/**
 * A fresh token for a running job (asked of whoever holds the App's key, directly or not), or null when none could be
 * had.
 */
export type RenewToken = () => Promise<JobToken | null>;

/**
 * After a renewal that gave nothing (no intake answered, GitHub refused), how long the job works on before asking
 * again.
 */
const RENEW_RETRY_MS = 60_000;
/** A renewal that has not settled by then counts as none (the intake's own waits are shorter). */
const RENEW_TIMEOUT_MS = 120_000;
/**
 * How long a use waits for a renewal while the token it holds is still good for another minute: a
 * missing intake then costs a request these seconds once a minute, not the renewal's whole timeout.
 */
const WAIT_WHILE_VALID_MS = 5_000;
const STILL_VALID_MS = 60_000;

/**
 * A job's token for the whole of its work. A build may outlast the hour a token lives (and a token
 * reused for a new job may have 41 minutes left), so a use of the token with less than
 * TOKEN_MARGIN_MS left first asks for a fresh one (`renew`: from the intake, which alone holds the
 * App's key). Concurrent uses share one renewal; when none comes, the job works on with the token it
 * has and asks again a minute later.
 */
export class RenewableToken {
  private renewing: Promise<JobToken> | null = null;
  private retryAt = 0;

  constructor(
    private token: JobToken,
    private readonly renew: RenewToken,
    private readonly onRenewFailed: (error: unknown) => void = () => {},
    private readonly clock: () => number = Date.now,
  ) {}

  /** The token as the job holds it now (what it was handed, or its last renewal), without renewing. */
  get held(): JobToken {
    return this.token;
  }

  /**
   * The token to use now: renewed first when it has too little time left. While the one held is good
   * for another minute, a renewal is waited for a few seconds at most (the held one is used meanwhile).
   */
  async current(): Promise<JobToken> {
    const now = this.clock();
    if (!expiresSoon(this.token, now) || now < this.retryAt) return this.token;
    const renewing = (this.renewing ??= this.renewNow());
    if (Date.parse(this.token.expiresAt) - now <= STILL_VALID_MS) return renewing;
    const held = this.token;
    return Promise.race([renewing, sleep(WAIT_WHILE_VALID_MS).then(() => held)]);
  }

  private async renewNow(): Promise<JobToken> {
    try {
      const fresh = await Promise.race([
        this.renew(),
        sleep(RENEW_TIMEOUT_MS).then(() => Promise.reject(new Error(`no answer in ${RENEW_TIMEOUT_MS / 1000} s`))),
      ]);
      if (fresh && fresherThan(fresh, this.token)) this.token = fresh;
      else this.onRenewFailed(new Error("no fresher token came"));
    } catch (error) {
      this.onRenewFailed(error);
    }
    if (expiresSoon(this.token, this.clock())) this.retryAt = this.clock() + RENEW_RETRY_MS;
    this.renewing = null;
    return this.token;
  }
}

/**
 * Resolves after `ms` without holding the process open. On the global timers, not node:timers/promises,
 * so that tests' fake timers reach these waits.
 */
function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** What a job whose token could not be renewed logs (it works on with the token it has). */
function warnUnrenewed(
  log: { warn(fields: object, message: string): void },
  job: Pick<TokenHolder, "deliveryId">,
): (error: unknown) => void {
  return (error) =>
    log.warn(
      { err: error, deliveryId: job.deliveryId },
      "the job's token expires soon and no fresh one came; it works on with the one it has",
    );
}

/**
 * What the job's work holds: a getter for its token, renewed through `renew` as the job goes (a
 * build may outlast the token's hour); a renewal that does not come is logged and the job works on.
 */
export function renewingToken(
  token: JobToken,
  renew: RenewToken,
  log: { warn(fields: object, message: string): void },
  job: Pick<TokenHolder, "deliveryId">,
): TokenGetter {
  const renewable = new RenewableToken(token, renew, warnUnrenewed(log, job));
  return async (): Promise<GrantedToken> => renewable.current();
}
