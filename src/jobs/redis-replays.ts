import { DelayedError, UnrecoverableError, WaitingError, type Job as BullJob } from "bullmq";
import type { Logger } from "../shared/logger.js";
import { trimOldest } from "../shared/bounded-map.js";
import { claimedDeliveryId } from "./job-wire.js";
import type { Removal } from "./job.js";
import type { RedisStore } from "./store/redis.js";
import type { Running } from "./redis-worker-tokens.js";

/**
 * What a queue worker does with a signed job that ran before, put back in its queue by someone who can write to Redis
 * (its data read while it waited, its token with it): refuses it. Every job that runs to its end (done, failed,
 * dropped) is recorded as handled under its id, which its signature binds it to; one found handled when it starts
 * fails at once, logged, without a 👀, a comment or a token renewed (the intakes refuse those too). A job sent back
 * to wait (its thread busy, no token yet, handed back at shutdown) or whose worker died has not ended: it runs or
 * resumes as before; so is one whose processor answers "again" (its claim released for GitHub's redelivery of the
 * webhook, which keeps its delivery id): that answer is the job's result, and the worker removes such a job once it
 * completes, since BullMQ adds nothing under the id of a job it still holds.
 */
export function onlyOnce(
  store: RedisStore,
  log: Logger,
  processor: (bullJob: BullJob, running: Running) => Promise<void | "again">,
): (bullJob: BullJob, running: Running) => Promise<void | "again"> {
  return async (bullJob, running) => {
    if (await store.handled(running.id)) {
      log.error(
        { deliveryId: claimedDeliveryId(bullJob.data), queue: running.queue, jobId: running.id },
        "refused a job in Redis that has already run: it was put back after it ended, and does not run again",
      );
      throw new UnrecoverableError(`job ${running.id} in ${running.queue} has already run`);
    }
    let ended = true;
    try {
      const result = await processor(bullJob, running);
      ended = result !== "again";
      return result;
    } catch (error) {
      ended = !(error instanceof DelayedError || error instanceof WaitingError);
      throw error;
    } finally {
      if (ended)
        await store
          .markHandled(running.id)
          .catch((error: unknown) =>
            log.warn(
              { err: error, deliveryId: claimedDeliveryId(bullJob.data) },
              "could not record in Redis that a job has run; put back, it would not be recognised as a replay",
            ),
          );
    }
  };
}

/**
 * How long after an intake received a removal its workers act on it when they hear it: an intake publishes it at once,
 * so a message older than this is an old one published again.
 */
const REMOVAL_HEARD_WITHIN_MS = 5 * 60_000;
/** Removals remembered per worker (their delivery ids). */
const REMOVALS_REMEMBERED = 1_000;

/**
 * The removals this worker has acted on: one published again (an intake signed it once; anyone who can write to Redis
 * can repeat it) is a no-op — heard before, or older than REMOVAL_HEARD_WITHIN_MS.
 */
export class RemovalsHeard {
  private readonly heard = new Map<string, number>();

  constructor(private readonly clock: () => number = Date.now) {}

  /** Whether `removal` is heard for the first time, and fresh: then it is acted on (and remembered). */
  first(removal: Removal): boolean {
    const key = `${removal.installationId}/${removal.deliveryId}`;
    if (this.heard.has(key)) return false;
    const age = this.clock() - removal.receivedAt;
    if (age > REMOVAL_HEARD_WITHIN_MS || age < -REMOVAL_HEARD_WITHIN_MS) return false;
    this.heard.set(key, removal.receivedAt);
    trimOldest(this.heard, REMOVALS_REMEMBERED);
    return true;
  }
}
