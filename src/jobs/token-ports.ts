import Bottleneck from "bottleneck";
import { Redis } from "ioredis";
import { tokenPorts as portsFromToken, type SharedPacing, type TokenPorts } from "../github/token-port.js";
import type { Logger } from "../workflow/deps.js";

type PortsEnv = Parameters<typeof portsFromToken>[0] & { REDIS_URL?: string | undefined };

/**
 * A worker's (or job runner's) GitHub ports from each job's token. With Redis, GitHub's pacing per
 * installation is shared by every process through it (plugin-throttling's clustering): the connection
 * is made here, where Redis is known, and handed to the GitHub adapter.
 */
export function tokenPorts(env: PortsEnv, log: Logger): TokenPorts {
  return portsFromToken(env, log, env.REDIS_URL ? redisPacing(env.REDIS_URL, log) : null);
}

function redisPacing(redisUrl: string, log: Logger): SharedPacing {
  const connection = new Bottleneck.IORedisConnection({ client: new Redis(redisUrl) });
  connection.on("error", (error: unknown) => log.warn({ err: error }, "GitHub pacing through Redis failed"));
  return { Bottleneck, connection };
}
