import { z } from "zod";
import { jobTokenSchema, type JobToken } from "../github/job-token.js";
import { MAX_STEPS } from "../plan/validate.js";
import { jobSchema, removalSchema, type Job, type Removal } from "./job.js";
import type { Sealer } from "./sealed.js";

/**
 * What a job carries through Redis, and why a worker may trust it (SPEC §10: nothing in the queue is
 * trusted that the intake did not sign). Redis is shared with whoever can reach it, so:
 * - the job and its dedupe keys are signed for the queue and the BullMQ id they were added under (a
 *   job copied into another queue, for example past triage's permission check, does not verify);
 * - its installation token is sealed, bound to the job (delivery id, repository, kind) as the
 *   cipher's associated data, and removed from the job once it has run (`withoutToken`).
 * Intake and workers hold the secret; the signature says "one of them wrote this".
 */
/** Workers' queues: triage (👀, permission, quick answers), then lane work. */
export const TRIAGE_QUEUE = "blueprint-triage";
export const WORK_QUEUE = "blueprint-work";

/** A BullMQ job id from a delivery id (custom ids may not hold ':' and must not look like numbers). */
export function bullId(phase: "m" | "t" | "w", deliveryId: string): string {
  return `${phase}-${deliveryId.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

export const JOB_OPTIONS = { attempts: 1, removeOnComplete: { age: 24 * 3600, count: 10_000 }, removeOnFail: { age: 7 * 24 * 3600 } };

export const wireSchema = z.object({
  job: jobSchema,
  keys: z.array(z.string()),
  /** Absent once the job has run: a finished or failed job kept in Redis holds no token. */
  sealedToken: z.string().optional(),
  signature: z.string(),
});
export type Wire = z.output<typeof wireSchema>;

/** Where a wire sits: its queue and BullMQ id are part of what is signed. */
export interface WirePlace {
  queue: string;
  id: string;
}

/** A job in Redis that no intake or worker signed, or that was changed since: never run, never trusted with a token. */
export class UnsignedJob extends Error {}

const signed = (place: WirePlace, wire: Pick<Wire, "job" | "keys">) => ({ queue: place.queue, id: place.id, job: wire.job, keys: wire.keys });

/** `job` and `keys` signed for `place`, with the job's token sealed for it. */
export function signWire(sealer: Sealer, place: WirePlace, wire: { job: Job; keys: string[]; sealedToken?: string | undefined }): Wire {
  return { job: wire.job, keys: wire.keys, ...(wire.sealedToken === undefined ? {} : { sealedToken: wire.sealedToken }), signature: sealer.sign(signed(place, wire)) };
}

/** The wire found at `place`, verified; throws UnsignedJob for anything else (the delivery id, when readable, says which). */
export function verifiedWire(sealer: Sealer, place: WirePlace, data: unknown): Wire {
  const parsed = wireSchema.safeParse(data);
  if (!parsed.success) throw new UnsignedJob(`job ${place.id} in ${place.queue} is not a signed job (${parsed.error.issues[0]?.path.join(".") || "shape"}: ${parsed.error.issues[0]?.message ?? "invalid"})`);
  if (!sealer.verify(signed(place, parsed.data), parsed.data.signature)) {
    throw new UnsignedJob(`job ${place.id} in ${place.queue} does not carry a valid signature: it was changed in Redis, moved from elsewhere, or signed with another secret`);
  }
  return parsed.data;
}

/** The delivery id a job's data names, for logging a job that did not verify (never trusted beyond that). */
export function claimedDeliveryId(data: unknown): string | undefined {
  const deliveryId = (data as { job?: { deliveryId?: unknown } } | null)?.job?.deliveryId;
  return typeof deliveryId === "string" ? deliveryId : undefined;
}

/** A job's data without its token (the same data when it has none): what a finished or failed job keeps in Redis. */
export function withoutToken(data: unknown): unknown {
  if (data === null || typeof data !== "object" || !("sealedToken" in data)) return data;
  const { sealedToken: _dropped, ...rest } = data as Record<string, unknown>;
  return rest;
}

/**
 * What a sealed job token is for: the installation, repository and job kind it was minted for.
 * Sealed with the token, so only an intake sets it; a refresh mints for this scope alone, never for
 * whatever repository a request in Redis names.
 */
export const tokenScopeSchema = z.object({ installationId: z.number().int(), repository: z.string().min(1), kind: z.string() });
export type TokenScope = z.output<typeof tokenScopeSchema>;
const scopedTokenSchema = jobTokenSchema.extend({ scope: tokenScopeSchema });

export function scopeOf(job: Job): TokenScope {
  return { installationId: job.installationId, repository: job.repository.name, kind: job.kind };
}

/** The cipher's associated data: a token sealed for one job does not open for any other. */
function boundTo(job: Job): string {
  return JSON.stringify([job.deliveryId, `${job.repository.owner}/${job.repository.name}`, job.kind]);
}

/** `token` sealed for `job`, with the scope it was minted for. */
export function sealToken(sealer: Sealer, token: JobToken, job: Job): string {
  return sealer.seal(JSON.stringify({ ...token, scope: scopeOf(job) }), boundTo(job));
}

/** A sealed token opened for `job`: throws when it was sealed for another job (moved in Redis), with another secret, or changed. */
export function openToken(sealer: Sealer, sealedToken: string | undefined, job: Job): JobToken & { scope: TokenScope } {
  if (sealedToken === undefined) throw new Error(`job ${job.deliveryId} carries no token: it has already run`);
  let plain: string;
  try {
    plain = sealer.open(sealedToken, boundTo(job));
  } catch {
    throw new Error(`the token in job ${job.deliveryId} was not sealed for this job (${job.kind} on ${job.repository.owner}/${job.repository.name}): it was moved from another job, changed, or sealed with another secret`);
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
 * renewed: a build, MAX_STEPS steps of the agent's wall time plus STEP_MARGIN_MS each; anything
 * else, one run. JOB_MARGIN_MS on top of either.
 */
export function jobLifetimeMs(kind: Job["kind"], maxWallTimeMs: number): number {
  const runs = kind === "build" || kind === "review-approval" ? MAX_STEPS : 1;
  return runs * (maxWallTimeMs + STEP_MARGIN_MS) + JOB_MARGIN_MS;
}

const removalMessageSchema = z.object({ removal: removalSchema, signature: z.string() });

/** A removal as an intake publishes it to every worker: signed, since each worker removes files and stops jobs on it. */
export function signRemoval(sealer: Sealer, removal: Removal): string {
  return JSON.stringify({ removal, signature: sealer.sign({ channel: "remove", removal }) });
}

/** The removal in a published message, or null when it is not one an intake signed. */
export function verifiedRemoval(sealer: Sealer, message: string): Removal | null {
  let data: unknown;
  try {
    data = JSON.parse(message);
  } catch {
    return null;
  }
  const parsed = removalMessageSchema.safeParse(data);
  return parsed.success && sealer.verify({ channel: "remove", removal: parsed.data.removal }, parsed.data.signature) ? parsed.data.removal : null;
}
