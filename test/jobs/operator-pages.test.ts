import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { JobMetrics } from "../../src/jobs/metrics.js";
import { listenWithOperatorPages } from "../../src/jobs/operator-pages.js";
import { readDiskUse, recordWorkdirBytes } from "../../src/shared/disk-usage.js";
import { tempDir } from "../helpers/git-repo.js";

const queue = {
  stats: async () => ({ backend: "redis" as const, waiting: 0, running: 0, workers: 1, concurrency: 2, ready: true }),
};
const servers: Array<ReturnType<typeof listenWithOperatorPages>> = [];
afterEach(() => servers.splice(0).forEach((server) => server.close()));

async function healthOf(disk?: Parameters<typeof listenWithOperatorPages>[4]): Promise<Record<string, unknown>> {
  const server = listenWithOperatorPages(0, "127.0.0.1", queue, new JobMetrics({ processMetrics: false }), disk);
  servers.push(server);
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/healthz`);
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

describe("a queue worker's /healthz (npm run worker with PORT)", () => {
  it("reports the work directory's disk use: as last recorded, the bound, the free space", async () => {
    const workdir = tempDir("blueprint-workdir-");
    expect((await healthOf(() => readDiskUse(workdir, 1024))).disk).toEqual({
      workdirBytes: null,
      limitBytes: 1024,
      freeBytes: expect.any(Number),
      measuredAt: null,
    });
    await recordWorkdirBytes(workdir, 4096, new Date("2026-01-02T03:04:05Z"));
    expect((await healthOf(() => readDiskUse(workdir, null))).disk).toEqual({
      workdirBytes: 4096,
      limitBytes: null,
      freeBytes: expect.any(Number),
      measuredAt: "2026-01-02T03:04:05.000Z",
    });
  });

  it("still answers when the disk cannot be read, and says why", async () => {
    const health = await healthOf(async () => {
      throw new Error("statfs failed");
    });
    expect(health).toMatchObject({ status: "ok", disk: { error: "statfs failed" } });
  });
});
