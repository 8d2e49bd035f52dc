import { DelayedError, UnrecoverableError, WaitingError, type Job as BullJob } from "bullmq";
import {
  openToken,
  QUEUE_LIFE_MS,
  renewingToken,
  type JobToken,
  type RenewToken,
  type Sealer,
} from "../credentials/index.js";
import { RefreshRefused, TokenUnavailable, type TokenRefresher } from "../credentials/redis.js";
import type { Logger as WorkerLog } from "../shared/logger.js";
import type { TokenGetter } from "../shared/token-getter.js";
import { verifiedOrFailed, withoutToken, type Wire, type WirePlace } from "./job-wire.js";

/** What a queue worker needs to read a job's token from Redis and have it renewed by the intakes. */
export interface TokenKeeper {
  log: WorkerLog;
  sealer: Sealer;
  refresher: TokenRefresher;
}

/**
 * A job with no fresh token yet (no intake answered) looks again this soon, and is given up after QUEUE_LIFE_MS in the
 * queue.
 */
const TOKEN_RETRY_MS = 30_000;

/** A verified job that still carries its token (every job does until it has run). */
export type Ready = Wire & { sealedToken: string };
/** Where a job sits, and the lock this worker holds on it: what a token request names. */
export type Running = WirePlace & { lockToken: string };

/** The job's token as sealed in it, opened (triage: minutes old at most, or renewed by `withFreshToken`). */
export function heldToken({ sealer }: TokenKeeper, wire: Ready): JobToken {
  return openToken(sealer, wire.sealedToken, wire.job);
}

/**
 * Lane work's token: as the job brought it (`held`, what a job runner starts with), how to renew it
 * (`renew`, what the runner asks), and the token as it is at each use, renewed as the job goes (`current`).
 */
export function liveToken(
  keeper: TokenKeeper,
  bullJob: BullJob,
  wire: Ready,
  running: Running,
): { held: JobToken; renew: RenewToken; current: TokenGetter } {
  const held = heldToken(keeper, wire);
  const renew = renewal(keeper, bullJob, wire, running);
  return { held, renew, current: renewingToken(held, renew, keeper.log, wire.job) };
}

/**
 * A running job's token renewed through the intakes (a long build outlasts its hour): kept in the job,
 * sealed, so a worker taking the job over starts with it. Throws TokenUnavailable when none came.
 */
function renewal(keeper: TokenKeeper, bullJob: BullJob, wire: Ready, running: Running): RenewToken {
  const { log, sealer, refresher } = keeper;
  let sealed = wire.sealedToken;
  return async () => {
    const { sealedToken, refreshed } = await refresher.fresh(wire.job, sealed, running);
    if (refreshed) {
      sealed = sealedToken;
      await bullJob
        .updateData({ ...wire, sealedToken })
        .catch((error: unknown) =>
          log.warn(
            { err: error, deliveryId: wire.job.deliveryId },
            "the job's fresh token could not be kept in the queue",
          ),
        );
      log.info(
        { deliveryId: wire.job.deliveryId },
        "the running job's token was about to expire: an intake sent a fresh one",
      );
    }
    return openToken(sealer, sealed, wire.job);
  };
}

/**
 * The job as queued, verified, with a token that outlasts its work: a fresh one is kept in the job, for its next phase
 * or a takeover.
 */
export async function withFreshToken(keeper: TokenKeeper, bullJob: BullJob, running: Running): Promise<Ready> {
  const { log, refresher } = keeper;
  const queued = verifiedOrFailed(keeper.sealer, log, running, bullJob.data, "it does not run");
  const { sealedToken } = queued;
  if (sealedToken === undefined) throw new UnrecoverableError(`job ${running.id} carries no token: it has already run`);
  try {
    const fresh = await refresher.fresh(queued.job, sealedToken, running);
    if (!fresh.refreshed) return { ...queued, sealedToken };
    const wire = { ...queued, sealedToken: fresh.sealedToken };
    await bullJob.updateData(wire);
    log.info({ deliveryId: wire.job.deliveryId }, "the job's token was about to expire: an intake sent a fresh one");
    return wire;
  } catch (error) {
    // Only a token no intake could renew yet is worth waiting for; one that is not this job's, or refused, never will
    // be.
    if (
      error instanceof RefreshRefused ||
      !(error instanceof TokenUnavailable) ||
      Date.now() - queued.job.receivedAt > QUEUE_LIFE_MS
    )
      throw error;
    log.warn(
      { err: error, deliveryId: queued.job.deliveryId },
      "no fresh token for the job yet: it waits and asks again",
    );
    await bullJob.moveToDelayed(Date.now() + TOKEN_RETRY_MS, running.lockToken);
    throw new DelayedError();
  }
}

/** Once a job has run (done or failed, not sent back to wait), its data in Redis keeps no token. */
export function droppingToken(
  log: WorkerLog,
  queue: string,
  processor: (bullJob: BullJob, running: Running) => Promise<void | "again">,
) {
  return async (bullJob: BullJob, lockToken?: string): Promise<void | "again"> => {
    const running: Running = { queue, id: bullJob.id ?? "", lockToken: lockToken ?? bullJob.token ?? "" };
    let result: void | "again";
    try {
      result = await processor(bullJob, running);
    } catch (error) {
      if (!(error instanceof DelayedError || error instanceof WaitingError)) await dropToken(log, bullJob);
      throw error;
    }
    await dropToken(log, bullJob);
    return result;
  };
}

export function dropToken(log: WorkerLog, bullJob: BullJob): Promise<void> {
  return withoutToken(bullJob.data) === bullJob.data
    ? Promise.resolve()
    : bullJob
        .updateData(withoutToken(bullJob.data))
        .catch((error: unknown) =>
          log.warn({ err: error, jobId: bullJob.id }, "could not remove a finished job's token from Redis"),
        );
}
