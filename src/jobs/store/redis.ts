import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { Sealer } from "../../credentials/index.js";
import type { Logger } from "../../shared/logger.js";
import { lastingFor } from "../../shared/lasting.js";
import type { Job, Removal } from "../job.js";
import { bullId, JOB_OPTIONS, signRemoval, signWire, TRIAGE_QUEUE, WORK_QUEUE } from "../job-wire.js";
import { threadOf } from "../job.js";
import type { Carried, Enqueued, JobStore } from "./index.js";
import { labelOfLock, lockOwner, removalOf, signedTime, startOf, verifiedTime } from "./redis-records.js";

const PREFIX = "blueprint";
/** How long a delivery, comment or review id is remembered: GitHub redelivers within days, not weeks. */
const SEEN_TTL_S = 7 * 24 * 3600;
/**
 * How long an installation's count of commands not yet triaged outlives its last command: a count a crash left too high
 * heals then.
 */
const PENDING_TTL_MS = 10 * 60_000;
/**
 * How long a job handed back at shutdown keeps its thread: the next worker resumes it before the
 * commands queued behind it (if no worker comes that soon, the lock lapses and the queue moves on).
 */
const HANDED_OVER_HOLD_MS = 10 * 60_000;
/**
 * How long a count of the work queue's workers is reused: BullMQ counts them by parsing Redis's CLIENT
 * LIST, every client of the Redis, and asked at every enqueue that took 0.46 ms of a worker's CPU each
 * with 36 clients (against 0.1 ms for the active count beside it). Workers come and go in minutes.
 */
const WORKERS_COUNT_MS = 5_000;

/**
 * Claims every key after the first or none (a redelivery, or a second delivery of one comment, claims
 * none: 0). A claim counts one more command of the installation not yet triaged (the hash KEYS[1]) and
 * returns its turn: 1 for the first since the installation had none pending, then 2, 3, … (never
 * lower than an earlier command's while that one is pending, so turns keep the installation's order).
 */
const CLAIM = `
for i = 2, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then return 0 end
end
for i = 2, #KEYS do redis.call('SET', KEYS[i], ARGV[1], 'EX', ARGV[2]) end
redis.call('HINCRBY', KEYS[1], 'pending', 1)
local turn = redis.call('HINCRBY', KEYS[1], 'turn', 1)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return turn`;
/** One command of the installation triaged: with none left pending, the next command's turn is 1 again. */
const SETTLE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HINCRBY', KEYS[1], 'pending', -1) <= 0 then redis.call('DEL', KEYS[1]) end
return 1`;

/**
 * The thread lock's value is the job id of the job that holds it ("<job id>\\n<label>" from older workers): only its job
 * may renew or release it, or take it over after a crash. What a thread is shown for it comes from that job as signed
 * (`labelOfLock`), never from the lock's text.
 */
const OWNER = `
local function owner(value)
  if not value then return nil end
  local cut = string.find(value, '\\n', 1, true)
  if not cut then return value end
  return string.sub(value, 1, cut - 1)
end`;
const LOCK = `${OWNER}
local held = owner(redis.call('GET', KEYS[1]))
if held and held ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;
const RENEW = `${OWNER}
if owner(redis.call('GET', KEYS[1])) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;
const UNLOCK = `${OWNER}
if owner(redis.call('GET', KEYS[1])) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1`;

/** A thread a worker has taken for one job's lane work. */
export interface HeldThread {
  thread: string;
  workId: string;
  deliveryId: string;
}

const key = {
  seen: (claim: string) => `${PREFIX}:seen:${claim}`,
  waiting: (thread: string) => `${PREFIX}:waiting:${thread}`,
  lock: (thread: string) => `${PREFIX}:thread:${thread}`,
  removed: (installationId: number) => `${PREFIX}:removed:${installationId}`,
  pending: (installationId: number) => `${PREFIX}:pending:${installationId}`,
  cancel: (workId: string) => `${PREFIX}:cancel:${workId}`,
  started: (workId: string) => `${PREFIX}:started:${workId}`,
  handled: (id: string) => `${PREFIX}:handled:${id}`,
};

/**
 * The job store in Redis, shared by every intake and worker (the reliability promises (docs/reliability.md) across
 * replicas): a delivery claimed once, each installation's commands taking their turns at triage, the
 * triage and work queues (BullMQ), one job per thread at a time (a lock its worker renews; a dead
 * worker's lock lapses and its job may take it over), and `/cancel` and removals reaching whichever
 * worker runs the job.
 */
export class RedisStore implements JobStore {
  readonly shared = true;
  static readonly CANCEL_CHANNEL = `${PREFIX}:cancel`;
  /** Where an intake tells every worker of an uninstall (signed: each worker then removes files). */
  static readonly REMOVE_CHANNEL = `${PREFIX}:remove`;
  readonly triageQueue: Queue;
  readonly workQueue: Queue;
  /** How many processes work the work queue (BullMQ's CLIENT LIST, parsed: kept for a few seconds). */
  private readonly workQueueWorkers: () => Promise<number>;

  constructor(private readonly options: { connection: Redis; sealer: Sealer; concurrency: number }) {
    const { connection } = options;
    this.triageQueue = new Queue(TRIAGE_QUEUE, { connection });
    this.workQueue = new Queue(WORK_QUEUE, { connection });
    this.workQueueWorkers = lastingFor(WORKERS_COUNT_MS, () => this.workQueue.getWorkersCount());
  }

  private get redis(): Redis {
    return this.options.connection;
  }

  async claim(
    keys: readonly string[],
    job: Pick<Job, "deliveryId" | "installationId">,
  ): Promise<{ turn: number } | null> {
    const seen = keys.map(key.seen);
    const turn = Number(
      await this.redis.eval(
        CLAIM,
        seen.length + 1,
        key.pending(job.installationId),
        ...seen,
        job.deliveryId,
        SEEN_TTL_S,
        PENDING_TTL_MS,
      ),
    );
    return turn === 0 ? null : { turn };
  }

  async release(keys: readonly string[]): Promise<void> {
    if (keys.length > 0) await this.redis.del(...keys.map(key.seen));
  }

  async triaged(installationId: number): Promise<void> {
    await this.redis.eval(SETTLE, 1, key.pending(installationId));
  }

  /** Lane work waiting on its thread, and in the work queue signed, with the job's sealed token. */
  async enqueueWork(job: Job, carried: Carried): Promise<Enqueued> {
    const thread = threadOf(job);
    const workId = bullId("w", job.deliveryId);
    const replies = await this.redis
      .multi()
      .sadd(key.waiting(thread), workId)
      .scard(key.waiting(thread))
      .get(key.lock(thread))
      .exec();
    const [, waiting, lock] = (replies ?? []).map(([, value]) => value);
    const running = await this.labelOf(thread, typeof lock === "string" ? lock : null);
    await this.workQueue.add(
      job.kind,
      signWire(this.options.sealer, { queue: WORK_QUEUE, id: workId }, { job, ...carried }),
      { ...JOB_OPTIONS, jobId: workId },
    );
    const [active, workers] = await Promise.all([this.workQueue.getActiveCount(), this.workQueueWorkers()]);
    return {
      ahead: Number(waiting) - 1 + (running === null ? 0 : 1),
      running,
      full: active >= Math.max(1, workers) * this.options.concurrency,
    };
  }

  /** `/cancel`: drops the thread's waiting jobs and tells every worker to stop its running one. */
  async cancel(thread: string): Promise<{ running: string | null; dropped: number }> {
    const replies = await this.redis
      .multi()
      .scard(key.waiting(thread))
      .del(key.waiting(thread))
      .get(key.lock(thread))
      .exec();
    const [dropped, , lock] = (replies ?? []).map(([, value]) => value);
    const held = typeof lock === "string" ? lock : null;
    const workId = held === null ? undefined : lockOwner(held);
    if (workId) {
      // Pub/sub reaches a running job at once; the key is what its worker checks on each renewal, should it have missed
      // the message.
      await this.redis.set(key.cancel(workId), "1", "EX", 3600);
      await this.redis.publish(RedisStore.CANCEL_CHANNEL, workId);
    }
    return { running: await this.labelOf(thread, held), dropped: Number(dropped) };
  }

  async runningLabel(thread: string): Promise<string | null> {
    return this.labelOf(thread, await this.redis.get(key.lock(thread)));
  }

  /**
   * Recorded for every worker, each time signed (a time someone else wrote drops nothing), and told (signed) to the
   * workers running a job it covers.
   */
  async recordRemoval(removal: Removal): Promise<void> {
    const { sealer } = this.options;
    const removed = key.removed(removal.installationId);
    const fields =
      removal.repositories === null
        ? ["*"]
        : removal.repositories.map((repository) => `${repository.owner}/${repository.name}`.toLowerCase());
    const signed = fields.map((field) => [
      field,
      signedTime(sealer, removalOf(removal.installationId, field), removal.receivedAt),
    ]);
    await this.redis.multi().hset(removed, Object.fromEntries(signed)).expire(removed, SEEN_TTL_S).exec();
    await this.redis.publish(RedisStore.REMOVE_CHANNEL, signRemoval(sealer, removal));
  }

  async removed(job: Job): Promise<boolean> {
    const fields = ["*", `${job.repository.owner}/${job.repository.name}`.toLowerCase()];
    const values = await this.redis.hmget(key.removed(job.installationId), ...fields);
    return fields.some((field, at) => {
      const removedAt = verifiedTime(this.options.sealer, removalOf(job.installationId, field), values[at]);
      return removedAt !== null && removedAt >= job.receivedAt;
    });
  }

  /** Takes the thread for a job (or keeps it: a job taken over after a crash already holds it). */
  async takeThread(held: HeldThread, ttlMs: number): Promise<boolean> {
    return (await this.redis.eval(LOCK, 1, key.lock(held.thread), held.workId, ttlMs)) === 1;
  }

  /**
   * Whether a job that just took its thread should run: the first time, it must still be waiting
   * (a `/cancel` drops waiting jobs), and its start is recorded, signed (an intake renews its token for
   * its lifetime from then); a job started before (taken over after a crash) resumes.
   */
  async startOnThread(held: HeldThread): Promise<"run" | "resume" | "dropped"> {
    const start = signedTime(this.options.sealer, startOf(held.workId, held.deliveryId), Date.now());
    const first = await this.redis.set(key.started(held.workId), start, "EX", SEEN_TTL_S, "NX");
    if (first !== "OK") return "resume";
    return (await this.redis.srem(key.waiting(held.thread), held.workId)) === 1 ? "run" : "dropped";
  }

  /** When the job `workId` first started on its thread, as its worker signed it; null when none did. */
  async startedAt(workId: string, deliveryId: string): Promise<number | null> {
    const value = await this.redis.get(key.started(workId));
    return verifiedTime(this.options.sealer, startOf(workId, deliveryId), value);
  }

  /** Whether the job `id` (of any queue) has run to its end already: a job put back after that does not run again. */
  async handled(id: string): Promise<boolean> {
    return (await this.redis.exists(key.handled(id))) === 1;
  }

  /** The job `id` ran to its end (done, failed or dropped; not handed back, not waiting for its thread). */
  async markHandled(id: string): Promise<void> {
    await this.redis.set(key.handled(id), String(Date.now()), "EX", SEEN_TTL_S);
  }

  async cancelled(workId: string): Promise<boolean> {
    return (await this.redis.exists(key.cancel(workId))) === 1;
  }

  /**
   * While lane work runs: its thread lock renewed (a worker that dies lets it lapse, and another takes
   * the job over), and a `/cancel` sent to another process heard, every third of the lock's life.
   * Returns the function that stops both.
   */
  keepThread(held: HeldThread, lockMs: number, controller: AbortController, log: Logger): () => void {
    const { deliveryId } = held;
    const beat = () => {
      // A missed renewal is retried at the next beat; several in a row and another worker takes the job over.
      void this.renew(held, lockMs).catch((error: unknown) =>
        log.warn(
          { err: error, deliveryId },
          "could not renew the job's thread lock in Redis; trying again at the next beat",
        ),
      );
      void this.cancelled(held.workId).then(
        (yes) => yes && controller.abort("cancelled with /cancel"),
        (error: unknown) =>
          log.warn(
            { err: error, deliveryId },
            "could not ask Redis whether the job was cancelled; asking again at the next beat",
          ),
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
  async leaveThread(held: HeldThread, handedBack: boolean, log: Logger): Promise<void> {
    const { deliveryId } = held;
    if (handedBack) {
      await this.renew(held, HANDED_OVER_HOLD_MS).catch((error: unknown) =>
        log.warn(
          { err: error, deliveryId },
          "could not keep a handed-back job's thread; commands queued behind it may run before it resumes",
        ),
      );
    } else {
      await this.redis
        .eval(UNLOCK, 1, key.lock(held.thread), held.workId)
        .catch((error: unknown) =>
          log.warn(
            { err: error, deliveryId },
            "could not unlock the job's thread in Redis; the next command waits until the lock lapses",
          ),
        );
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.triageQueue.close(), this.workQueue.close()]);
  }

  private async renew(held: HeldThread, ttlMs: number): Promise<boolean> {
    return (await this.redis.eval(RENEW, 1, key.lock(held.thread), held.workId, ttlMs)) === 1;
  }

  private labelOf(thread: string, lock: string | null): Promise<string | null> {
    return labelOfLock(this.redis, this.options.sealer, thread, lock);
  }
}
