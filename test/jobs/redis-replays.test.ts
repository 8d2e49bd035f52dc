import { existsSync } from "node:fs";
import nock from "nock";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Job, Removal } from "../../src/jobs/job.js";
import { signRemoval, TRIAGE_QUEUE, WORK_QUEUE } from "../../src/jobs/job-wire.js";
import type { RunWork } from "../../src/jobs/redis-worker.js";
import { RedisStore } from "../../src/jobs/store/redis.js";
import { RepoCache } from "../../src/workspace/repo-cache.js";
import { WorkdirKeeper } from "../../src/workspace/workdir-keeper.js";
import { createBareRepo, tempDir } from "../helpers/git-repo.js";
import { githubDouble, INSTALLATION_ID } from "../helpers/github-double.js";
import { useRedis } from "../helpers/redis-server.js";
import { startTestWorkers } from "../helpers/redis-workers.js";
import { eventually, finished, helpJob, planJob, sealedFor, sealer, signedWire } from "../helpers/redis-jobs.js";

/**
 * Someone who can write to Redis, against what Blueprint shows and does: the words a thread lock holds are never
 * posted; a job put back after it ran does not run again; a removal's time they wrote, or a removal published again,
 * removes nothing.
 */

const redis = useRedis({ queues: [TRIAGE_QUEUE, WORK_QUEUE] });
beforeAll(() => {
  nock.disableNetConnect();
  nock.enableNetConnect("127.0.0.1");
});
afterEach(() => nock.cleanAll());
afterAll(() => nock.enableNetConnect());

const THREAD = "Codertocat/Hello-World#1";
const LOCK = `blueprint:thread:${THREAD}`;
const INJECTED = "@everyone **Urgent**: [re-authorise Blueprint](https://attacker.example/login)";

/** A queue worker process on GitHub's double; lane work, if any, is `runWork` (this test's job runner). */
async function worker(options: { runWork?: RunWork; removeFiles?: (removal: Removal) => void } = {}) {
  const github = githubDouble({ permissions: { maintainer: "write" } });
  const { workers, log } = await startTestWorkers(redis.url, {
    ...options,
    env: { BLUEPRINT_GITHUB_WRITE_GAP_MS: "0" },
  });
  redis.closers.push(() => workers.close());
  return { github, log };
}

function store(): RedisStore {
  const made = new RedisStore({ connection: redis.connection, sealer, concurrency: 2 });
  redis.closers.push(() => made.close());
  return made;
}

/** A command for triage on thread #1, signed as an intake does; the BullMQ job once it has finished. */
async function triaged(job: Job) {
  const id = `t-${job.deliveryId}`;
  await redis.queue(TRIAGE_QUEUE).add(job.kind, signedWire(TRIAGE_QUEUE, id, job), { jobId: id });
  return finished(redis.queue(TRIAGE_QUEUE), id);
}

/** A signed plan job waiting in the work queue (delayed: no worker takes it), as the thread lock may name it. */
async function waitingPlan(deliveryId: string, number = 1): Promise<string> {
  const id = `w-${deliveryId}`;
  const wire = signedWire(WORK_QUEUE, id, planJob(deliveryId, { number }));
  await redis.queue(WORK_QUEUE).add("plan", wire, { jobId: id, delay: 3600_000 });
  return id;
}

describe("what a thread is shown for its running job", () => {
  it("/status and /cancel name the job the lock names, as signed, never the text a Redis writer put in the lock", async () => {
    const { github } = await worker();
    const planning = await waitingPlan("d-planning");
    const elsewhere = await waitingPlan("d-elsewhere", 2);
    const status = (deliveryId: string) => ({ ...helpJob(deliveryId), kind: "status" }) as Job;
    const shown = async (lock: string, deliveryId: string) => {
      await redis.connection.set(LOCK, lock);
      expect(await (await triaged(status(deliveryId))).getState()).toBe("completed");
      return github.botComments().at(-1)?.body ?? "";
    };

    const named = await shown(`${planning}\n${INJECTED}`, "d-status-1");
    expect(named).toContain("- Running now: planning for @maintainer");
    // The lock naming a job that does not exist, one of another thread, or a value in no format Blueprint writes.
    expect(await shown(`w-d-nothing\n${INJECTED}`, "d-status-2")).toContain("- Running now: a job\n");
    expect(await shown(`${elsewhere}\n${INJECTED}`, "d-status-3")).toContain("- Running now: a job\n");
    expect(await shown(INJECTED, "d-status-4")).toContain("- Running now: a job\n");

    await redis.connection.set(LOCK, `${planning}\n${INJECTED}`);
    const cancel = { ...helpJob("d-cancel"), kind: "cancel" } as Job;
    expect(await (await triaged(cancel)).getState()).toBe("completed");
    expect(github.botComments().at(-1)?.body).toMatch(/^Stopping planning for @maintainer at the next safe point\./);

    for (const { body } of github.botComments()) {
      expect(body).not.toContain("@everyone");
      expect(body).not.toContain("attacker.example");
      expect(body).not.toContain("Urgent");
    }
  });

  it("the Queued notice's running job is the signed job the lock names", async () => {
    const planning = await waitingPlan("d-running");
    await redis.connection.set(LOCK, `${planning}\n${INJECTED}`);
    const next = planJob("d-next");
    const queued = await store().enqueueWork(next, { keys: [], sealedToken: sealedFor(next) });
    expect(queued).toMatchObject({ ahead: 1, running: "planning for @maintainer" });
  });

  it("a worker's own lock holds only its job's id", async () => {
    const held = { thread: THREAD, workId: "w-d-own", deliveryId: "d-own" };
    expect(await store().takeThread(held, 30_000)).toBe(true);
    expect(await redis.connection.get(LOCK)).toBe("w-d-own");
  });
});

describe("a signed job put back in its queue after it ran", () => {
  it("a triage job runs once: put back under its id (BullMQ had removed it), it fails without a second answer", async () => {
    const { github, log } = await worker();
    const job = helpJob("d-help");
    const id = `t-${job.deliveryId}`;
    // What someone reading Redis copied while it waited: the signed job and its sealed token.
    const copied = signedWire(TRIAGE_QUEUE, id, job);
    await redis.queue(TRIAGE_QUEUE).add("help", copied, { jobId: id });
    expect(await (await finished(redis.queue(TRIAGE_QUEUE), id)).getState()).toBe("completed");
    expect(github.botComments()).toHaveLength(1);

    await redis.queue(TRIAGE_QUEUE).remove(id);
    await redis.queue(TRIAGE_QUEUE).add("help", copied, { jobId: id });
    const replayed = await finished(redis.queue(TRIAGE_QUEUE), id);
    expect([await replayed.getState(), replayed.failedReason]).toEqual([
      "failed",
      `job ${id} in ${TRIAGE_QUEUE} has already run`,
    ]);
    expect(github.botComments()).toHaveLength(1);
    expect(log.lines.filter((line) => line.message.startsWith("refused a job in Redis that has already run"))).toEqual([
      expect.objectContaining({ fields: expect.objectContaining({ deliveryId: "d-help" }) }),
    ]);
  });

  it("a quick answer is given once per comment: a /help or /status put back with the worker's records of it deleted is not answered again", async () => {
    const { github, log } = await worker();
    for (const kind of ["help", "status"] as const) {
      const job = { ...helpJob(`d-${kind}-again`), kind } as Job;
      const id = `t-${job.deliveryId}`;
      const copied = signedWire(TRIAGE_QUEUE, id, job);
      await redis.queue(TRIAGE_QUEUE).add(kind, copied, { jobId: id });
      expect(await (await finished(redis.queue(TRIAGE_QUEUE), id)).getState()).toBe("completed");
      // Put back by someone who can delete in Redis: the job gone from BullMQ, and the worker's mark that it ran.
      await redis.queue(TRIAGE_QUEUE).remove(id);
      await redis.connection.del(`blueprint:handled:${id}`);
      expect(await store().handled(id)).toBe(false);
      await redis.queue(TRIAGE_QUEUE).add(kind, copied, { jobId: id });
      expect(await (await finished(redis.queue(TRIAGE_QUEUE), id)).getState()).toBe("completed");
    }
    // One answer each: GitHub had Blueprint's 👀 on the comment already when the copy came back.
    expect(github.botComments()).toHaveLength(2);
    expect(github.reactions).toHaveLength(4);
    expect(
      log.lines
        .filter((line) => line.message.startsWith("not answering a command again"))
        .map((line) => line.fields.deliveryId),
    ).toEqual(["d-help-again", "d-status-again"]);
  });

  it("a triage job whose actor's permission could not be read leaves no trace: GitHub's redelivery, same id, runs", async () => {
    // Registered before the double, so it answers first, once (a 403 is not retried).
    const outage = nock("https://api.github.com")
      .get("/repos/Codertocat/Hello-World/collaborators/maintainer/permission")
      .reply(403, { message: "Resource not accessible by integration" });
    const { github } = await worker();
    const job = { ...helpJob("d-outage"), kind: "cancel" } as Job;
    const id = "t-d-outage";
    await redis.queue(TRIAGE_QUEUE).add(job.kind, signedWire(TRIAGE_QUEUE, id, job), { jobId: id });
    // Not kept as completed: BullMQ adds nothing under the id of a job it still holds, which would drop the redelivery.
    await eventually(
      async () =>
        outage.isDone() && (await redis.queue(TRIAGE_QUEUE).getJobState(id)) === "unknown" ? true : undefined,
      "the first triage to end and its job to go",
    );
    expect(github.reactions).toEqual([]);
    expect(await store().handled(id)).toBe(false);

    // GitHub's redelivery, handed on under the same id as the first: handled now, and recorded.
    expect(await (await triaged(job)).getState()).toBe("completed");
    expect(github.reactions).toEqual([{ commentId: (job as { commentId: number }).commentId, content: "eyes" }]);
    expect(await store().handled("t-d-outage")).toBe(true);
  });

  it("lane work runs once: put back after it finished, it is not taken for a job whose worker died", async () => {
    const ran: string[] = [];
    const { log } = await worker({ runWork: async (job) => void ran.push(job.deliveryId) });
    const job = planJob("d-lane");
    const id = `w-${job.deliveryId}`;
    const copied = signedWire(WORK_QUEUE, id, job);
    await store().enqueueWork(job, { keys: [], sealedToken: copied.sealedToken });
    expect(await (await finished(redis.queue(WORK_QUEUE), id)).getState()).toBe("completed");
    expect(ran).toEqual(["d-lane"]);

    await redis.queue(WORK_QUEUE).remove(id);
    await redis.queue(WORK_QUEUE).add("plan", copied, { jobId: id });
    const replayed = await finished(redis.queue(WORK_QUEUE), id);
    expect([await replayed.getState(), replayed.failedReason]).toEqual([
      "failed",
      `job ${id} in ${WORK_QUEUE} has already run`,
    ]);
    expect(ran).toEqual(["d-lane"]);
    expect(log.lines.some((line) => line.message.startsWith("taking over a job"))).toBe(false);
  });
});

describe("removals someone else wrote or published again", () => {
  it("a removal time written into Redis unsigned, or signed for another installation's removal, drops no job", async () => {
    const ran: string[] = [];
    await worker({ runWork: async (job) => void ran.push(job.deliveryId) });
    const removed = `blueprint:removed:${INSTALLATION_ID}`;
    await redis.connection.hset(removed, "*", String(Date.now() + 3600_000));
    const other = await store();
    await other.recordRemoval({
      deliveryId: "d-other",
      installationId: 999,
      repositories: null,
      receivedAt: Date.now() + 3600_000,
    });
    // That installation's signed time, copied to this installation's removals.
    const signedElsewhere = await redis.connection.hget("blueprint:removed:999", "*");
    await redis.connection.hset(removed, "codertocat/hello-world", signedElsewhere ?? "");
    const job = planJob("d-kept");
    await other.enqueueWork(job, { keys: [], sealedToken: sealedFor(job) });
    expect(await (await finished(redis.queue(WORK_QUEUE), "w-d-kept")).getState()).toBe("completed");
    expect(ran).toEqual(["d-kept"]);
  });

  it("a removal published again, or an old one published now, removes no files", async () => {
    const workdir = tempDir("blueprint-workdir-");
    const cache = new RepoCache(workdir);
    const keeper = new WorkdirKeeper(cache);
    const bare = createBareRepo({ "README.md": "# Hello\n" });
    const { log } = await worker({ removeFiles: (removal) => void keeper.remove(removal) });
    const cloned = () =>
      keeper.use(
        { installationId: INSTALLATION_ID, owner: "Codertocat", name: "Hello-World", cloneUrl: bare.url },
        async () => (await cache.prepare({ cloneUrl: bare.url, ref: "refs/heads/main" })).dispose(),
      );
    await cloned();
    const removal: Removal = {
      deliveryId: "d-removed",
      installationId: INSTALLATION_ID,
      repositories: null,
      receivedAt: Date.now(),
    };
    await store().recordRemoval(removal);
    await eventually(async () => (existsSync(cache.mirrorPath(bare.url)) ? undefined : true), "the files to go");

    // The App installed again, the repository cloned again; the removal's message, as an intake signed it, published again.
    await cloned();
    const ignored = () =>
      log.lines.filter((line) => line.message.startsWith("ignored a removal in Redis heard before"));
    await redis.connection.publish(RedisStore.REMOVE_CHANNEL, signRemoval(sealer, removal));
    const old = { ...removal, deliveryId: "d-removed-earlier", receivedAt: Date.now() - 3600_000 };
    await redis.connection.publish(RedisStore.REMOVE_CHANNEL, signRemoval(sealer, old));
    await eventually(async () => (ignored().length === 2 ? true : undefined), "both to be ignored");
    expect(ignored().map((line) => line.fields.deliveryId)).toEqual(["d-removed", "d-removed-earlier"]);
    expect(existsSync(cache.mirrorPath(bare.url))).toBe(true);
  });
});
