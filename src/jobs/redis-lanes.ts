import type { Redis } from "ioredis";
import type { Job, Removal } from "./job.js";

const PREFIX = "blueprint";
/** How long a delivery, comment or review id is remembered: GitHub redelivers within days, not weeks. */
const SEEN_TTL_S = 7 * 24 * 3600;

/**
 * How long an installation's count of commands not yet triaged outlives its last command: a count
 * that a crash left too high heals then.
 */
const PENDING_TTL_MS = 10 * 60_000;

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

/** The thread lock's value is "<job id>\\n<label>"; only its job may renew or release it, or take it over after a crash. */
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
redis.call('SET', KEYS[1], ARGV[1] .. '\\n' .. ARGV[2], 'PX', ARGV[3])
return 1`;
const RENEW = `${OWNER}
if owner(redis.call('GET', KEYS[1])) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;
const UNLOCK = `${OWNER}
if owner(redis.call('GET', KEYS[1])) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1`;

/**
 * The reliability promises (docs/reliability.md) across replicas, kept in Redis: a delivery claimed once, one job per
 * thread at a time (a lock its worker renews; a dead worker's lock lapses and its job may take it
 * over), and `/cancel` reaching whichever worker runs the thread's job.
 */
export class RedisLanes {
  static readonly CANCEL_CHANNEL = `${PREFIX}:cancel`;
  /** Where an intake tells every worker of an uninstall (signed: each worker then removes files). */
  static readonly REMOVE_CHANNEL = `${PREFIX}:remove`;

  constructor(private readonly redis: Redis) {}

  /**
   * Claims a delivery's keys: null when another delivery holds one (a duplicate), else the command's
   * turn among its installation's commands not yet triaged (1: the only one).
   */
  async claim(keys: readonly string[], deliveryId: string, installationId: number): Promise<{ turn: number } | null> {
    const seen = keys.map((key) => `${PREFIX}:seen:${key}`);
    const turn = Number(await this.redis.eval(CLAIM, seen.length + 1, this.pendingKey(installationId), ...seen, deliveryId, SEEN_TTL_S, PENDING_TTL_MS));
    return turn === 0 ? null : { turn };
  }

  /** A claimed command has been triaged (or never will be): one fewer of its installation's commands pending. */
  async settle(installationId: number): Promise<void> {
    await this.redis.eval(SETTLE, 1, this.pendingKey(installationId));
  }

  async release(keys: readonly string[]): Promise<void> {
    if (keys.length > 0) await this.redis.del(...keys.map((key) => `${PREFIX}:seen:${key}`));
  }

  /** Records a job as waiting on its thread; returns how many jobs are ahead of it and what runs now. */
  async wait(thread: string, workId: string): Promise<{ ahead: number; running: string | null }> {
    const [, waiting, lock] = await this.redis.multi().sadd(this.waitingKey(thread), workId).scard(this.waitingKey(thread)).get(this.lockKey(thread)).exec().then((replies) => (replies ?? []).map(([, value]) => value));
    const running = labelOf(typeof lock === "string" ? lock : null);
    return { ahead: Number(waiting) - 1 + (running === null ? 0 : 1), running };
  }

  /** Takes the thread for a job (or keeps it: a job taken over after a crash already holds it). */
  async lock(thread: string, workId: string, label: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.eval(LOCK, 1, this.lockKey(thread), workId, label, ttlMs)) === 1;
  }

  async renew(thread: string, workId: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.eval(RENEW, 1, this.lockKey(thread), workId, ttlMs)) === 1;
  }

  async unlock(thread: string, workId: string): Promise<void> {
    await this.redis.eval(UNLOCK, 1, this.lockKey(thread), workId);
  }

  /**
   * Whether a job that just took its thread should run: the first time, it must still be waiting
   * (a `/cancel` drops waiting jobs); a job started before (taken over after a crash) resumes.
   */
  async start(thread: string, workId: string): Promise<"run" | "resume" | "dropped"> {
    const first = await this.redis.set(`${PREFIX}:started:${workId}`, "1", "EX", SEEN_TTL_S, "NX");
    if (first !== "OK") return "resume";
    return (await this.redis.srem(this.waitingKey(thread), workId)) === 1 ? "run" : "dropped";
  }

  async runningLabel(thread: string): Promise<string | null> {
    return labelOf(await this.redis.get(this.lockKey(thread)));
  }

  /** `/cancel`: drops the thread's waiting jobs and tells every worker to stop its running one. */
  async cancel(thread: string): Promise<{ running: string | null; dropped: number }> {
    const [, dropped, , lock] = await this.redis
      .multi()
      .smembers(this.waitingKey(thread))
      .scard(this.waitingKey(thread))
      .del(this.waitingKey(thread))
      .get(this.lockKey(thread))
      .exec()
      .then((replies) => (replies ?? []).map(([, value]) => value));
    const held = typeof lock === "string" ? lock : null;
    const workId = held?.split("\n")[0];
    if (workId) {
      // Pub/sub reaches a running job at once; the key is what its worker checks on each renewal, should it have missed the message.
      await this.redis.set(this.cancelKey(workId), "1", "EX", 3600);
      await this.redis.publish(RedisLanes.CANCEL_CHANNEL, workId);
    }
    return { running: labelOf(held), dropped: Number(dropped) };
  }

  /**
   * Records a removal for every worker (a job of its repositories received before it is dropped when
   * it reaches its turn) and tells the workers running one; `message` is the signed removal.
   */
  async remove(removal: Removal, message: string): Promise<void> {
    const key = this.removedKey(removal.installationId);
    const fields = removal.repositories === null ? ["*"] : removal.repositories.map((repository) => `${repository.owner}/${repository.name}`.toLowerCase());
    await this.redis
      .multi()
      .hset(key, Object.fromEntries(fields.map((field) => [field, String(removal.receivedAt)])))
      .expire(key, SEEN_TTL_S)
      .exec();
    await this.redis.publish(RedisLanes.REMOVE_CHANNEL, message);
  }

  /** Whether a removal recorded since the job was received covers it (see `remove`). */
  async removed(job: Pick<Job, "installationId" | "receivedAt"> & { repository: Pick<Job["repository"], "owner" | "name"> }): Promise<boolean> {
    const at = await this.redis.hmget(this.removedKey(job.installationId), "*", `${job.repository.owner}/${job.repository.name}`.toLowerCase());
    return at.some((value) => value !== null && Number(value) >= job.receivedAt);
  }

  async cancelled(workId: string): Promise<boolean> {
    return (await this.redis.exists(this.cancelKey(workId))) === 1;
  }

  private waitingKey(thread: string) {
    return `${PREFIX}:waiting:${thread}`;
  }

  private lockKey(thread: string) {
    return `${PREFIX}:thread:${thread}`;
  }

  private removedKey(installationId: number) {
    return `${PREFIX}:removed:${installationId}`;
  }

  private pendingKey(installationId: number) {
    return `${PREFIX}:pending:${installationId}`;
  }

  private cancelKey(workId: string) {
    return `${PREFIX}:cancel:${workId}`;
  }
}

function labelOf(lock: string | null): string | null {
  if (lock === null) return null;
  const cut = lock.indexOf("\n");
  return cut === -1 ? "a job" : lock.slice(cut + 1);
}
