import type { Redis } from "ioredis";
import type { Sealer } from "../../credentials/index.js";
import { jobLabel, threadOf } from "../job.js";
import { verifiedWire, WORK_QUEUE } from "../job-wire.js";

/**
 * What the Redis store keeps beside the queues that someone who can write to Redis must not be able to
 * forge: the words a thread is shown for its running job, when a job first started, and removals. Each
 * is read back only as a worker or intake signed it (or built from a job one signed); anything else
 * counts as absent. Deleting one is still possible: what that allows is in docs/security.md.
 */

/** What a thread is told runs there when the job its lock names cannot be read as one Blueprint signed. */
const UNNAMED = "a job";

/**
 * The words shown on a thread for the job its lock names (`/status`, `/cancel`, "Queued"): built from
 * that job as an intake or worker signed it in the work queue, never from text in Redis. The lock's value
 * is only trusted to name a job; one that names no signed job of this thread is "a job".
 */
export async function labelOfLock(
  redis: Redis,
  sealer: Sealer,
  thread: string,
  lock: string | null,
): Promise<string | null> {
  if (lock === null) return null;
  const workId = lockOwner(lock);
  const raw = await redis.hget(`bull:${WORK_QUEUE}:${workId}`, "data");
  if (raw === null) return UNNAMED;
  try {
    const { job } = verifiedWire(sealer, { queue: WORK_QUEUE, id: workId }, JSON.parse(raw));
    return threadOf(job) === thread ? jobLabel(job) : UNNAMED;
  } catch {
    return UNNAMED;
  }
}

/** The job id a thread lock's value names ("<job id>", or "<job id>\n<label>" as older workers wrote it). */
export function lockOwner(lock: string): string {
  const cut = lock.indexOf("\n");
  return cut === -1 ? lock : lock.slice(0, cut);
}

/**
 * A time signed for what it is about (`about`: a job's first start, a repository's removal): "<ms>.<signature>". Moved
 * to anything else, or changed, it no longer verifies.
 */
export function signedTime(sealer: Sealer, about: Record<string, string | number>, at: number): string {
  return `${at}.${sealer.sign({ ...about, at })}`;
}

/** The time in `value` if it was signed for `about` (`signedTime`); else null (forged, moved, absent). */
export function verifiedTime(
  sealer: Sealer,
  about: Record<string, string | number>,
  value: string | null | undefined,
): number | null {
  const [at, signature] = (value ?? "").split(".", 2);
  const ms = Number(at);
  if (!at || !signature || !Number.isSafeInteger(ms)) return null;
  return sealer.verify({ ...about, at: ms }, signature) ? ms : null;
}

/** What a job's first start on its thread is signed about: a worker writes it, an intake reads it (renewals). */
export const startOf = (workId: string, deliveryId: string) => ({ started: workId, deliveryId });

/** What a removal's time is signed about: the installation and the field ("*" or "owner/name", lower case). */
export const removalOf = (installationId: number, field: string) => ({ removed: installationId, field });
