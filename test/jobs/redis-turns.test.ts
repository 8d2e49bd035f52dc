import { Worker, type Job as BullJob } from "bullmq";
import { describe, expect, it } from "vitest";
import type { JobToken, JobTokenSource } from "../../src/credentials/index.js";
import type { Job } from "../../src/jobs/job.js";
import { TRIAGE_QUEUE, verifiedWire } from "../../src/jobs/job-wire.js";
import { RedisStore } from "../../src/jobs/store/redis.js";
import { Minting } from "../../src/jobs/redis-mint.js";
import { INSTALLATION_TOKEN } from "../helpers/github-double.js";
import { eventually, planJob, recordingLog, sealer } from "../helpers/redis-jobs.js";
import { useRedis } from "../helpers/redis-server.js";

/**
 * Issue #29: acknowledging a command must not wait behind the job queue. Intake hands each accepted
 * webhook on to triage itself, and triage takes the installations' commands in turns.
 */

const redis = useRedis({ queues: [TRIAGE_QUEUE] });

const token: JobToken = {
  token: INSTALLATION_TOKEN,
  expiresAt: new Date(Date.now() + 3600_000).toISOString(),
  permissions: { issues: "write" },
};
const command = (deliveryId: string, installationId: number): Job => planJob(deliveryId, { installationId });

/** An intake's minting on the test Redis; `tokens` mints every job's token unless the test says otherwise. */
function minting(tokens: JobTokenSource = { forJob: async () => token }, fallbackMs?: number) {
  const log = recordingLog();
  const lanes = new RedisStore({ connection: redis.connection, sealer, concurrency: 1 });
  const minting = new Minting({
    connection: redis.connection,
    store: lanes,
    sealer,
    log,
    tokens,
    lockMs: 30_000,
    ...(fallbackMs === undefined ? {} : { fallbackMs }),
  });
  redis.closers.push(
    () => lanes.close(),
    () => minting.close(),
  );
  /** What `submit` does: the claim, then the accepted webhook queued and handed on. */
  const accept = async (job: Job) => {
    const claim = await lanes.claim([`delivery:${job.deliveryId}`], job);
    if (!claim) return null;
    await minting.accept(job, [`delivery:${job.deliveryId}`], claim.turn);
    return claim.turn;
  };
  return { lanes, log, minting, accept };
}

/** The triage jobs' delivery ids in the order one worker, started now, takes them. */
async function triageOrder(count: number): Promise<string[]> {
  const order: string[] = [];
  const worker = new Worker(
    TRIAGE_QUEUE,
    async (bullJob: BullJob) =>
      void order.push(verifiedWire(sealer, { queue: TRIAGE_QUEUE, id: bullJob.id ?? "" }, bullJob.data).job.deliveryId),
    { connection: redis.connection, concurrency: 1 },
  );
  redis.closers.push(() => worker.close());
  await eventually(async () => (order.length === count ? true : undefined), `${count} triage jobs taken`);
  return order;
}

describe("an installation's turn", () => {
  it("counts each installation's commands not yet triaged: 1, 2, 3 in the order claimed; a duplicate claims nothing; 1 again once all are triaged", async () => {
    const { lanes, accept } = minting();
    expect(await accept(command("a-1", 1))).toBe(1);
    expect(await accept(command("a-2", 1))).toBe(2);
    expect(await accept(command("b-1", 2))).toBe(1);
    expect(await accept(command("a-2", 1))).toBeNull();
    expect(await accept(command("a-3", 1))).toBe(3);

    // a-1 triaged: a-2 and a-3 still wait, so the next command goes after them.
    await lanes.triaged(1);
    expect(await accept(command("a-4", 1))).toBe(4);
    for (let n = 0; n < 3; n++) await lanes.triaged(1);
    expect(await accept(command("a-5", 1))).toBe(1);
    // Settling more than was claimed never makes a count below zero: the next is still first.
    for (let n = 0; n < 3; n++) await lanes.triaged(1);
    expect(await accept(command("a-6", 1))).toBe(1);
  });

  it("triage takes every installation's first command before any installation's second, each installation's in the order they came (the fourth and later through the mint queue)", async () => {
    const { accept } = minting();
    for (const [id, installation] of [
      ["a-1", 1],
      ["a-2", 1],
      ["a-3", 1],
      ["a-4", 1],
      ["b-1", 2],
      ["b-2", 2],
      ["c-1", 3],
    ] as const)
      await accept(command(id, installation));
    await eventually(
      async () => ((await redis.queue(TRIAGE_QUEUE).count()) === 7 ? true : undefined),
      "seven jobs in triage",
    );

    expect(await triageOrder(7)).toEqual(["a-1", "b-1", "c-1", "a-2", "b-2", "a-3", "a-4"]);
  });
});

describe("the intake's hand-on", () => {
  it("hands an accepted webhook on to triage itself, its token sealed in, and leaves nothing in the mint queue", async () => {
    const { accept, minting: mint } = minting();
    await accept(command("d-1", 5));

    const queued = await eventually(() => redis.queue(TRIAGE_QUEUE).getJob("t-d-1"), "the job in triage");
    const wire = verifiedWire(sealer, { queue: TRIAGE_QUEUE, id: "t-d-1" }, queued.data);
    expect(wire.job.deliveryId).toBe("d-1");
    expect(wire.sealedToken).toBeDefined();
    // Gone from the mint queue (it waited there, delayed, only in case this intake stopped first).
    await eventually(
      async () => (Object.values(await mint.queue.getJobCounts()).every((count) => count === 0) ? true : undefined),
      "the mint queue empty",
    );
  });

  it("when its own hand-on fails, the queued copy is minted by an intake's minter, in its turn", async () => {
    let asked = 0;
    const flaky: JobTokenSource = {
      forJob: async () => {
        asked++;
        if (asked === 1) throw new Error("GitHub did not answer");
        return token;
      },
    };
    const { accept, log, minting: mint } = minting(flaky, 200);
    await accept(command("e-1", 6));
    await accept(command("e-2", 6));

    const second = await eventually(() => redis.queue(TRIAGE_QUEUE).getJob("t-e-2"), "e-2 in triage");
    const first = await eventually(
      () => redis.queue(TRIAGE_QUEUE).getJob("t-e-1"),
      "e-1 in triage, from the mint queue",
    );
    expect(log.lines).toContainEqual(
      expect.objectContaining({ level: "warn", fields: expect.objectContaining({ deliveryId: "e-1" }) }),
    );
    expect([first.opts.priority, second.opts.priority]).toEqual([1, 2]);
    expect(verifiedWire(sealer, { queue: TRIAGE_QUEUE, id: "t-e-1" }, first.data).sealedToken).toBeDefined();
    // Minted, the queued copy is not kept: BullMQ adds nothing under the id of a job it holds, and GitHub's
    // redelivery of the webhook (its claim released, were triage to fail) comes under the same id.
    await eventually(
      async () => (Object.values(await mint.queue.getJobCounts()).every((count) => count === 0) ? true : undefined),
      "the mint queue empty",
    );
  });
});
