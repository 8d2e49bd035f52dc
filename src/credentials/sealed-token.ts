import { z } from "zod";
import { MAX_STEPS } from "../plan/validate.js";
import { buildsOnItsToken, jobTokenSchema, type JobToken, type TokenHolder } from "./job-token.js";
import type { Sealer } from "./sealed.js";

/** What a token is sealed for: the job it travels with through Redis. */
type SealedFor = Omit<TokenHolder, "receivedAt">;

/**
 * What a sealed job token is for: the installation, repository and job kind it was minted for.
 * Sealed with the token, so only an intake sets it; a refresh mints for this scope alone, never for
 * whatever repository a request in Redis names.
 */
const tokenScopeSchema = z.object({
  installationId: z.number().int(),
  repository: z.string().min(1),
  kind: z.string(),
});
type TokenScope = z.output<typeof tokenScopeSchema>;
const scopedTokenSchema = jobTokenSchema.extend({ scope: tokenScopeSchema });

function scopeOf(job: SealedFor): TokenScope {
  return { installationId: job.installationId, repository: job.repository.name, kind: job.kind };
}

/** The cipher's associated data: a token sealed for one job does not open for any other. */
function boundTo(job: SealedFor): string {
  return JSON.stringify([job.deliveryId, `${job.repository.owner}/${job.repository.name}`, job.kind]);
}

/** `token` sealed for `job`, with the scope it was minted for. */
export function sealToken(sealer: Sealer, token: JobToken, job: SealedFor): string {
  return sealer.seal(JSON.stringify({ ...token, scope: scopeOf(job) }), boundTo(job));
}

/**
 * A sealed token opened for `job`: throws when it was sealed for another job (moved in Redis), with another secret, or
 * changed.
 */
export function openToken(
  sealer: Sealer,
  sealedToken: string | undefined,
  job: SealedFor,
): JobToken & { scope: TokenScope } {
  if (sealedToken === undefined) throw new Error(`job ${job.deliveryId} carries no token: it has already run`);
  let plain: string;
  try {
    plain = sealer.open(sealedToken, boundTo(job));
  } catch {
    throw new Error(
      `the token in job ${job.deliveryId} was not sealed for this job (${job.kind} on ${job.repository.owner}/${job.repository.name}): it was moved from another job, changed, or sealed with another secret`,
    );
  }
  return scopedTokenSchema.parse(JSON.parse(plain));
}

/** How long a job may wait in the queue for its token before it is given up. */
export const QUEUE_LIFE_MS = 24 * 3600_000;
/** Per build step, beyond the agent's wall time: setup, verification, commit and push. */
const STEP_MARGIN_MS = 10 * 60_000;
/** Per job, beyond its runs: clone, acknowledgements, the report. */
const JOB_MARGIN_MS = 30 * 60_000;

/**
 * How long a job may run, from when a worker last started it, and so how long its token may be
 * renewed: a build (`buildsOnItsToken`, the "Build plan vN" button too), MAX_STEPS steps of the agent's wall time plus
 * STEP_MARGIN_MS each; anything
 * else, one run. JOB_MARGIN_MS on top of either.
 */
export function jobLifetimeMs(job: Pick<TokenHolder, "kind" | "action">, maxWallTimeMs: number): number {
  const runs = buildsOnItsToken(job) ? MAX_STEPS : 1;
  return runs * (maxWallTimeMs + STEP_MARGIN_MS) + JOB_MARGIN_MS;
}
