import { Redis } from "ioredis";
import { tokenPorts as portsFromToken, type SharedGates, type TokenPorts } from "../github/token-port.js";
import type { Logger } from "../shared/logger.js";

type PortsEnv = Parameters<typeof portsFromToken>[0] & { REDIS_URL?: string | undefined };

/**
 * A worker's (or job runner's) GitHub ports from each job's token. With Redis, GitHub's pacing per
 * installation is shared by every process through it: the connection is made here, where Redis is
 * known, and handed to the GitHub adapter as gates.
 */
export function tokenPorts(env: PortsEnv, log: Logger): TokenPorts {
  return portsFromToken(
    env,
    log,
    env.REDIS_URL ? new RedisGates(new Redis(env.REDIS_URL, { maxRetriesPerRequest: 1 }), log) : null,
  );
}

/**
 * Reserves the next start under a key at least `gapMs` after the last one, by Redis's clock (every
 * process shares it); the key lasts a second beyond it. Answers the milliseconds to wait.
 */
const RESERVE = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local at = math.max(now, tonumber(redis.call('GET', KEYS[1]) or '0'))
local gap = tonumber(ARGV[1])
redis.call('SET', KEYS[1], at + gap, 'PX', at + gap - now + 1000)
return at - now`;

/**
 * GitHub's gaps between one installation's writes, held across every process on one Redis: one round trip per gated
 * request.
 */
export class RedisGates implements SharedGates {
  constructor(
    private readonly redis: Redis,
    private readonly log: Logger,
  ) {
    redis.on("error", (error: unknown) => log.warn({ err: error }, "GitHub pacing through Redis failed"));
  }

  async reserve(key: string, gapMs: number): Promise<number> {
    try {
      return Number(await this.redis.eval(RESERVE, 1, `blueprint:pace:${key}`, gapMs));
    } catch (error) {
      this.log.warn(
        { err: error, key },
        "could not reserve a GitHub write's start in Redis; this process paces it alone",
      );
      throw error;
    }
  }
}
