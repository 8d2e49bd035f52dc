import { z } from "zod";
import { tokenPermissionsFor, type Job } from "../jobs/job.js";

/** An installation token for one job: one repository, the permissions the job needs. */
export const jobTokenSchema = z.object({
  token: z.string().min(1),
  expiresAt: z.string(),
  permissions: z.record(z.string(), z.string()),
});
export type JobToken = z.output<typeof jobTokenSchema>;

/** What a token is minted for: a job's installation, repository and kind. */
export type TokenFor = Pick<Job, "installationId" | "kind"> & { repository: Pick<Job["repository"], "name"> };

/** The one App call intake makes for a job (with the App's JWT). */
export interface TokenMinter {
  rest: {
    apps: {
      createInstallationAccessToken(request: {
        installation_id: number;
        repositories: string[];
        permissions?: Record<string, "read" | "write">;
      }): Promise<{ data: { token: string; expires_at: string; permissions?: Record<string, string | undefined> } }>;
    };
  };
}

/** A job's token with less than this left is replaced before the job's work uses it (a step may run for many minutes). */
export const TOKEN_MARGIN_MS = 10 * 60_000;

/** Whether a job's token has too little time left for the job's work to start with it. */
export function expiresSoon(token: JobToken, now = Date.now()): boolean {
  return Date.parse(token.expiresAt) - now <= TOKEN_MARGIN_MS;
}

/** Whether `token` outlives `than`. */
export function fresherThan(token: JobToken, than: JobToken): boolean {
  return Date.parse(token.expiresAt) > Date.parse(than.expiresAt);
}

/** After a renewal that gave nothing (no intake answered, GitHub refused), how long the job works on before asking again. */
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
    private readonly renew: () => Promise<JobToken | null>,
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
      const fresh = await Promise.race([this.renew(), sleep(RENEW_TIMEOUT_MS).then(() => Promise.reject(new Error(`no answer in ${RENEW_TIMEOUT_MS / 1000} s`)))]);
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
export function warnUnrenewed(log: { warn(fields: object, message: string): void }, job: Pick<Job, "deliveryId">): (error: unknown) => void {
  return (error) => log.warn({ err: error, deliveryId: job.deliveryId }, "the job's token expires soon and no fresh one came; it works on with the one it has");
}

/** Where intake gets a job's token: minted here (`JobTokens`) or on the token thread (`MintThread`). */
export interface JobTokenSource {
  forJob(job: TokenFor): Promise<JobToken>;
}

/** Reused while it has this long left, so a busy repository costs one mint per half hour, not one per webhook. */
const REUSE_MS = 40 * 60_000;

/**
 * Tokens reused per installation, repository and permissions while they have 40 minutes left: a
 * burst of webhooks for one repository costs one mint (concurrent asks share it), not one each.
 */
export class ReusedTokens implements JobTokenSource {
  private readonly minted = new Map<string, Promise<JobToken>>();

  constructor(private readonly mint: (job: TokenFor) => Promise<JobToken>) {}

  async forJob(job: TokenFor): Promise<JobToken> {
    const key = `${job.installationId}/${job.repository.name}/${JSON.stringify(tokenPermissionsFor(job.kind))}`;
    const cached = this.minted.get(key);
    if (cached) {
      const token = await cached.catch(() => null);
      if (token && Date.parse(token.expiresAt) - Date.now() > REUSE_MS) return token;
    }
    const fresh = this.mint(job);
    this.minted.set(key, fresh);
    fresh.catch(() => this.minted.delete(key));
    if (this.minted.size > 5_000) this.minted.delete(this.minted.keys().next().value ?? key);
    return fresh;
  }
}

/**
 * Mints, for each job, an installation token narrowed to the job's repository and the permissions
 * its kind needs (reused, as above); intake holds the App's key, workers only ever see these tokens.
 */
export class JobTokens extends ReusedTokens {
  constructor(minter: MinterFor) {
    super((job) => mintJobToken(minter, job));
  }
}

/** `minter(installationId)`: what signs `/app/...` calls with the App's JWT (and paces them). */
export type MinterFor = (installationId: number) => Promise<TokenMinter>;

/** One fresh token for a job: its repository only, the permissions its kind needs. */
export async function mintJobToken(minter: MinterFor, job: TokenFor): Promise<JobToken> {
  const permissions = tokenPermissionsFor(job.kind);
  const mint = async (asked: Record<string, "read" | "write"> | null) =>
    (await minter(job.installationId)).rest.apps.createInstallationAccessToken({
      installation_id: job.installationId,
      repositories: [job.repository.name],
      ...(asked ? { permissions: asked } : {}),
    });
  const { data } = await mint(permissions).catch(async (error: unknown) => {
    // An installation that has not accepted `checks` yet (GitHub: 422, not granted): the job runs without its check runs.
    if ((error as { status?: number }).status !== 422 || !permissions?.checks) throw error;
    const { checks: _withoutChecks, ...others } = permissions;
    return mint(others);
  });
  const granted = Object.fromEntries(Object.entries(data.permissions ?? {}).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
  return { token: data.token, expiresAt: data.expires_at, permissions: granted };
}
