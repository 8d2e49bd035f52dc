import { UnrecoverableError } from "bullmq";
import { z } from "zod";
import type { Sealer } from "../credentials/index.js";
import type { Logger } from "../shared/logger.js";
import { jobSchema, removalSchema, type Job, type Removal } from "./job.js";

/**
 * What a job carries through Redis, and why a worker may trust it (docs/security.md: nothing in the queue is
 * trusted that the intake did not sign). Redis is shared with whoever can reach it, so:
 * - the job and its dedupe keys are signed for the queue and the BullMQ id they were added under (a
 *   job copied into another queue, for example past triage's permission check, does not verify);
 * - its installation token is sealed, bound to the job (`credentials/sealed-token.ts`), and removed
 *   from the job once it has run (`withoutToken`).
 * Intake and workers hold the secret; the signature says "one of them wrote this".
 */
/** Workers' queues: triage (👀, permission, quick answers), then lane work. */
export const TRIAGE_QUEUE = "blueprint-triage";
export const WORK_QUEUE = "blueprint-work";

/** A BullMQ job id from a delivery id (custom ids may not hold ':' and must not look like numbers). */
export function bullId(phase: "m" | "t" | "w", deliveryId: string): string {
  return `${phase}-${deliveryId.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

export const JOB_OPTIONS = {
  attempts: 1,
  removeOnComplete: { age: 24 * 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

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

const signed = (place: WirePlace, wire: Pick<Wire, "job" | "keys">) => ({
  queue: place.queue,
  id: place.id,
  job: wire.job,
  keys: wire.keys,
});

/** `job` and `keys` signed for `place`, with the job's token sealed for it. */
export function signWire(
  sealer: Sealer,
  place: WirePlace,
  wire: { job: Job; keys: string[]; sealedToken?: string | undefined },
): Wire {
  return {
    job: wire.job,
    keys: wire.keys,
    ...(wire.sealedToken === undefined ? {} : { sealedToken: wire.sealedToken }),
    signature: sealer.sign(signed(place, wire)),
  };
}

/**
 * The wire found at `place`, verified; throws UnsignedJob for anything else (the delivery id, when readable, says
 * which).
 */
export function verifiedWire(sealer: Sealer, place: WirePlace, data: unknown): Wire {
  const parsed = wireSchema.safeParse(data);
  if (!parsed.success)
    throw new UnsignedJob(
      `job ${place.id} in ${place.queue} is not a signed job (${parsed.error.issues[0]?.path.join(".") || "shape"}: ${parsed.error.issues[0]?.message ?? "invalid"})`,
    );
  if (!sealer.verify(signed(place, parsed.data), parsed.data.signature)) {
    throw new UnsignedJob(
      `job ${place.id} in ${place.queue} does not carry a valid signature: it was changed in Redis, moved from elsewhere, or signed with another secret`,
    );
  }
  return parsed.data;
}

/**
 * The job at `place`, as an intake or worker signed it there; anything else is logged (`refused`: what becomes of it)
 * and failed for good, never retried.
 */
export function verifiedOrFailed(sealer: Sealer, log: Logger, place: WirePlace, data: unknown, refused: string): Wire {
  try {
    return verifiedWire(sealer, place, data);
  } catch (error) {
    log.error(
      { err: error, deliveryId: claimedDeliveryId(data), queue: place.queue, jobId: place.id },
      `refused a job in Redis that no intake signed: ${refused}`,
    );
    throw new UnrecoverableError(error instanceof Error ? error.message : String(error));
  }
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

const removalMessageSchema = z.object({ removal: removalSchema, signature: z.string() });

/**
 * A removal as an intake publishes it to every worker: signed, since each worker removes files and stops jobs on it.
 */
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
  return parsed.success && sealer.verify({ channel: "remove", removal: parsed.data.removal }, parsed.data.signature)
    ? parsed.data.removal
    : null;
}
