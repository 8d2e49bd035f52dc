import type { RedisLanes } from "./redis-lanes.js";
import type { WorkerLog } from "./redis-worker-context.js";

/**
 * How long a job handed back at shutdown keeps its thread: the next worker resumes it before the
 * commands queued behind it (if no worker comes that soon, the lock lapses and the queue moves on).
 */
const HANDED_OVER_HOLD_MS = 10 * 60_000;

/** A thread this worker has locked for one job's lane work. */
export interface HeldThread {
  thread: string;
  workId: string;
  deliveryId: string;
}

/**
 * While lane work runs: its thread lock renewed (a worker that dies lets it lapse, and another takes
 * the job over), and a `/cancel` sent to another process heard, every third of the lock's life.
 * Returns the function that stops both.
 */
export function keepThread(lanes: RedisLanes, log: WorkerLog, held: HeldThread, lockMs: number, controller: AbortController): () => void {
  const { thread, workId, deliveryId } = held;
  const beat = () => {
    // A missed renewal is retried at the next beat; several in a row and another worker takes the job over.
    void lanes.renew(thread, workId, lockMs).catch((error: unknown) => log.warn({ err: error, deliveryId }, "could not renew the job's thread lock in Redis; trying again at the next beat"));
    void lanes.cancelled(workId).then(
      (yes) => yes && controller.abort("cancelled with /cancel"),
      (error: unknown) => log.warn({ err: error, deliveryId }, "could not ask Redis whether the job was cancelled; asking again at the next beat"),
    );
  };
  const timer = setInterval(beat, Math.max(200, Math.floor(lockMs / 3)));
  return () => clearInterval(timer);
}

/**
 * The thread once the job stops here: kept for the next worker when the job was handed back (it
 * resumes before the commands queued behind it), else freed for the next command. Either failing
 * leaves the lock to lapse by itself: logged, not thrown.
 */
export async function leaveThread(lanes: RedisLanes, log: WorkerLog, held: HeldThread, handedBack: boolean): Promise<void> {
  const { thread, workId, deliveryId } = held;
  if (handedBack) {
    await lanes.renew(thread, workId, HANDED_OVER_HOLD_MS).catch((error: unknown) => log.warn({ err: error, deliveryId }, "could not keep a handed-back job's thread; commands queued behind it may run before it resumes"));
  } else {
    await lanes.unlock(thread, workId).catch((error: unknown) => log.warn({ err: error, deliveryId }, "could not unlock the job's thread in Redis; the next command waits until the lock lapses"));
  }
}
