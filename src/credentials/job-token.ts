import { z } from "zod";
import type { TokenMinter } from "../github/app-jwt.js";
// The job's shape and each kind's permissions: the one import credentials/ makes of jobs/.
import { buildsOnItsToken, tokenPermissionsFor, type Job } from "../jobs/job.js";

export { buildsOnItsToken };

/** How credentials/ logs (the workers' and the intake's pino loggers fit). */
export interface CredentialsLog {
  info(object: object, message?: string): void;
  warn(object: object, message?: string): void;
  error(object: object, message?: string): void;
}

/** An installation token for one job: one repository, the permissions the job needs. */
export const jobTokenSchema = z.object({
  token: z.string().min(1),
  expiresAt: z.string(),
  permissions: z.record(z.string(), z.string()),
});
export type JobToken = z.output<typeof jobTokenSchema>;

/** What a token is minted for: a job's installation, repository and kind. */
export type TokenFor = Pick<Job, "installationId" | "kind"> & { repository: Pick<Job["repository"], "name"> } & {
  action?: string;
};

/** What a sealed token is bound to, and what a renewal is measured against: the job's identity, kind and arrival. */
export type TokenHolder = Pick<Job, "deliveryId" | "installationId" | "kind" | "receivedAt"> & {
  repository: Pick<Job["repository"], "owner" | "name">;
} & { action?: string };

/**
 * A job's token with less than this left is replaced before the job's work uses it (a step may run for many minutes).
 */
export const TOKEN_MARGIN_MS = 10 * 60_000;

/** Whether a job's token has too little time left for the job's work to start with it. */
export function expiresSoon(token: JobToken, now = Date.now()): boolean {
  return Date.parse(token.expiresAt) - now <= TOKEN_MARGIN_MS;
}

/** Whether `token` outlives `than`. */
export function fresherThan(token: JobToken, than: JobToken): boolean {
  return Date.parse(token.expiresAt) > Date.parse(than.expiresAt);
}

/** Where intake gets a job's token (`JobTokens`, minting with the App's key). */
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
    const key = `${job.installationId}/${job.repository.name}/${JSON.stringify(tokenPermissionsFor(job))}`;
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
  const permissions = tokenPermissionsFor(job);
  const mint = async (asked: Record<string, "read" | "write"> | null) =>
    (await minter(job.installationId)).rest.apps.createInstallationAccessToken({
      installation_id: job.installationId,
      repositories: [job.repository.name],
      ...(asked ? { permissions: asked } : {}),
    });
  const { data } = await mint(permissions).catch(async (error: unknown) => {
    // An installation that has not accepted `checks` yet (GitHub: 422, not granted): the job runs without its check
    // runs.
    if ((error as { status?: number }).status !== 422 || !permissions?.checks) throw error;
    const { checks: _withoutChecks, ...others } = permissions;
    return mint(others);
  });
  const granted = Object.fromEntries(
    Object.entries(data.permissions ?? {}).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
  );
  return { token: data.token, expiresAt: data.expires_at, permissions: granted };
}
