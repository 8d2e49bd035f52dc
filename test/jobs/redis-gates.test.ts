import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisGates } from "../../src/jobs/token-ports.js";
import { recordingLog } from "../helpers/redis-jobs.js";
import { startRedisServer, type RedisServer } from "../helpers/redis-server.js";
import { PATIENCE_MS } from "../helpers/patience.js";

let redis: RedisServer;
const connections: Redis[] = [];
beforeAll(async () => {
  redis = await startRedisServer();
});
afterAll(async () => {
  await Promise.all(connections.map((connection) => connection.quit()));
  await redis.stop();
});

/** One process's gates: a connection of its own to the shared Redis. */
function processGates() {
  const connection = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  connections.push(connection);
  return new RedisGates(connection, recordingLog());
}

describe("GitHub's pacing shared through Redis", () => {
  it("lets an installation's first write go at once and holds the next ones a gap apart, whichever process asks; other installations do not wait", async () => {
    const [one, two] = [processGates(), processGates()];
    // A gap of an hour: the waits below shrink by the time between the calls, which is far below PATIENCE_MS on any
    // machine, and far below the gap.
    const gap = 3_600_000;
    expect(await one.reserve("7-ack:write", gap)).toBe(0);
    const second = await two.reserve("7-ack:write", gap);
    const third = await one.reserve("7-ack:write", gap);
    expect(second).toBeGreaterThan(gap - PATIENCE_MS);
    expect(second).toBeLessThanOrEqual(gap);
    expect(third).toBeGreaterThan(second + gap - PATIENCE_MS);
    expect(await two.reserve("8-ack:write", gap)).toBe(0);
    expect(await two.reserve("7-ack:notification", gap)).toBe(0);
  });

  it("rejects, logged, when Redis cannot answer (the pacing then gates the request in its own process)", async () => {
    const connection = new Redis(redis.url, { maxRetriesPerRequest: 0, lazyConnect: true, enableOfflineQueue: false });
    const log = recordingLog();
    const gates = new RedisGates(connection, log);
    await expect(gates.reserve("9-ack:write", 1_000)).rejects.toThrow();
    expect(log.lines).toContainEqual(
      expect.objectContaining({ level: "warn", fields: expect.objectContaining({ key: "9-ack:write" }) }),
    );
  });
});
