import { Octokit } from "@octokit/rest";
import { Queue, QueueEvents, Worker } from "bullmq";
import { Redis } from "ioredis";
import nock from "nock";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openToken } from "../../src/credentials/index.js";
import { answerTokenRequests, RefreshRefused, TokenRefresher } from "../../src/credentials/redis.js";
import { JobTokens } from "../../src/credentials/job-token.js";
import type { TokenMinter } from "../../src/github/app-jwt.js";
import type { Job } from "../../src/jobs/job.js";
import { TRIAGE_QUEUE, verifiedWire, WORK_QUEUE } from "../../src/jobs/job-wire.js";
import { runOf } from "../../src/jobs/redis-backend.js";
import { RedisStore } from "../../src/jobs/store/redis.js";
import { signedTime, startOf } from "../../src/jobs/store/redis-records.js";
import { githubDouble, INSTALLATION_TOKEN } from "../helpers/github-double.js";
import { startRedisServer, type RedisServer } from "../helpers/redis-server.js";
import { buildJob, planJob, recordingLog, repository, sealedFor, sealer, signedWire } from "../helpers/redis-jobs.js";
import { PATIENCE_MS } from "../helpers/patience.js";

/**
 * Workers hold no App key: a job whose token is about to expire asks an intake, through Redis, for a
 * fresh one. Anyone who can write to Redis can ask too, so an intake renews only the token of a job
 * that is running now, held by the worker that asks, within its lifetime.
 */

const MAX_WALL_TIME_MS = 20 * 60_000;
const PLAN_LIFETIME_MS = MAX_WALL_TIME_MS + 10 * 60_000 + 30 * 60_000;

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
  nock.disableNetConnect();
  nock.enableNetConnect("127.0.0.1");
});
afterAll(async () => {
  nock.enableNetConnect();
  await redis.stop();
});

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  nock.cleanAll();
});

async function intakeAndWorker() {
  const github = githubDouble();
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  await connection.flushall();
  const tokens = new JobTokens(
    async () => new Octokit({ auth: "app-jwt", request: { retries: 0 } }) as unknown as TokenMinter,
  );
  const store = new RedisStore({ connection, sealer, concurrency: 2 });
  const desk = answerTokenRequests({
    connection,
    tokens,
    sealer,
    log: recordingLog(),
    concurrency: 2,
    maxWallTimeMs: MAX_WALL_TIME_MS,
    queues: [TRIAGE_QUEUE, WORK_QUEUE],
    verifiedJob: (place, data) => verifiedWire(sealer, place, data).job,
    runOf: (place, job) => runOf(store, place, job),
  });
  const refresher = await TokenRefresher.start(redis.url, connection, sealer);
  const work = new Queue(WORK_QUEUE, { connection });
  // A worker taking jobs by hand: each stays active, its lock held with the token it was given.
  const taker = new Worker(WORK_QUEUE, null, { connection, lockDuration: 60_000 });
  // Someone else who can write to Redis, asking the intakes directly.
  const requests = new Queue("blueprint-token", { connection });
  const answers = new QueueEvents("blueprint-token", {
    connection: new Redis(redis.url, { maxRetriesPerRequest: null }),
  });
  await answers.waitUntilReady();
  closers.push(
    () => connection.quit(),
    () => store.close(),
    () => desk.close(),
    () => refresher.close(),
    () => work.close(),
    () => taker.close(),
    () => requests.close(),
    () => answers.close(),
  );
  const mints = () =>
    github.requests.filter((request) => request.path.endsWith("/access_tokens")).map((request) => request.body);
  const ask = async (data: unknown) => (await requests.add("refresh", data)).waitUntilFinished(answers, PATIENCE_MS);
  /** `job` queued as an intake would, then taken by this worker: running, with the lock token it holds. */
  const running = async (job: Job) => {
    const id = `w-${job.deliveryId}`;
    await work.add(job.kind, signedWire(WORK_QUEUE, id, job, { sealedToken: expiring(job) }), { jobId: id });
    const lockToken = `lock-${job.deliveryId}`;
    const taken = await taker.getNextJob(lockToken);
    if (taken?.id !== id) throw new Error(`took ${taken?.id} instead of ${id}`);
    return { bullJob: taken, place: { queue: WORK_QUEUE, id, lockToken } };
  };
  return { connection, store, work, refresher, mints, ask, running };
}

/** A token an intake sealed for `job` that expires in a minute. */
const expiring = (job: Job) => sealedFor(job, 60_000);
const PLAN_PERMISSIONS = {
  contents: "read",
  issues: "write",
  pull_requests: "write",
  metadata: "read",
  checks: "write",
};

describe("fresh job tokens through an intake", () => {
  it("renews the token of a running job, held by the worker that asks, for its repository and kind", async () => {
    const { refresher, mints, running } = await intakeAndWorker();
    const job = planJob("d-1");
    const { place } = await running(job);
    const { sealedToken, refreshed } = await refresher.fresh(job, expiring(job), place);
    expect(refreshed).toBe(true);
    expect(openToken(sealer, sealedToken, job)).toMatchObject({
      token: INSTALLATION_TOKEN,
      scope: { repository: "Hello-World", kind: "plan" },
    });
    expect(mints()).toEqual([{ repositories: ["Hello-World"], permissions: PLAN_PERMISSIONS }]);
  });

  it("renews nothing for a job that is not running: waiting its turn, or finished (as kept in Redis for a day)", async () => {
    const { refresher, work, mints, running } = await intakeAndWorker();
    const waiting = planJob("d-waiting");
    await work.add("plan", signedWire(WORK_QUEUE, "w-d-waiting", waiting), { jobId: "w-d-waiting", delay: 60_000 });
    await expect(
      refresher.fresh(waiting, expiring(waiting), { queue: WORK_QUEUE, id: "w-d-waiting", lockToken: "any" }),
    ).rejects.toThrow(/is delayed, not running/);

    const done = planJob("d-done");
    const { bullJob, place } = await running(done);
    await bullJob.moveToCompleted("done", place.lockToken, false);
    await expect(refresher.fresh(done, expiring(done), place)).rejects.toThrow(RefreshRefused);
    await expect(refresher.fresh(done, expiring(done), place)).rejects.toThrow(/is completed, not running/);
    expect(mints()).toEqual([]);
  });

  it("renews nothing for a running job asked for by anyone but the worker that holds it", async () => {
    const { refresher, mints, running } = await intakeAndWorker();
    const job = planJob("d-held");
    const { place } = await running(job);
    await expect(refresher.fresh(job, expiring(job), { ...place, lockToken: "someone-else" })).rejects.toThrow(
      /not held by the worker that asked/,
    );
    expect(mints()).toEqual([]);
  });

  it("renews nothing for a job past its lifetime: started too long ago, or received too long ago", async () => {
    const { refresher, connection, mints, running } = await intakeAndWorker();
    const long = planJob("d-long");
    const { place } = await running(long);
    // The job has been running for longer than a planning run may (its worker's start, as BullMQ records it).
    await connection.hset(
      `bull:${WORK_QUEUE}:${place.id}`,
      "processedOn",
      String(Date.now() - PLAN_LIFETIME_MS - 60_000),
    );
    await expect(refresher.fresh(long, expiring(long), place)).rejects.toThrow(/past its lifetime \(60 min\)/);

    const old = planJob("d-old", { receivedAt: Date.now() - 3 * 24 * 3600_000 });
    const started = await running(old);
    await expect(refresher.fresh(old, expiring(old), started.place)).rejects.toThrow(/past its lifetime/);
    expect(mints()).toEqual([]);
  });

  it("mints nothing for a request written into Redis with a token sealed for another job, or none", async () => {
    const { mints, ask, running } = await intakeAndWorker();
    const job = buildJob("d-build");
    const { place } = await running(job);
    // No sealed token at all.
    await expect(ask({ queue: place.queue, id: place.id, lockToken: place.lockToken })).rejects.toThrow();
    // A token sealed for a job on another repository, and one sealed for a plan (less than a build may do).
    for (const donor of [
      { ...planJob("d-elsewhere"), repository: { ...repository, name: "secrets" } },
      planJob("d-build"),
    ]) {
      await expect(ask({ ...place, sealedToken: expiring(donor) })).rejects.toThrow(/not sealed for this job/);
    }
    // A job that no intake signed, running under the worker's lock.
    await expect(ask({ ...place, id: "w-d-nothing", sealedToken: expiring(job) })).rejects.toThrow(
      /no job w-d-nothing/,
    );
    expect(mints()).toEqual([]);
  });

  it("renews nothing for a finished job put back to look running, with the token it had copied back in", async () => {
    const { refresher, store, mints, running } = await intakeAndWorker();
    const job = planJob("d-ended");
    const { bullJob, place } = await running(job);
    // It ran to its end on a worker (which records that), and someone made it look running again under a lock they hold.
    await store.markHandled(place.id);
    await bullJob.moveToCompleted("done", place.lockToken, false);
    const again = await running(planJob("d-ended-as-well"));
    await expect(refresher.fresh(job, expiring(job), { ...again.place, id: place.id })).rejects.toThrow(
      /is completed, not running/,
    );
    // A job that BullMQ has active, under the asker's lock, but that a worker recorded as ended: put back after it ran.
    const replayed = planJob("d-replayed");
    const second = await running(replayed);
    await store.markHandled(second.place.id);
    await expect(refresher.fresh(replayed, expiring(replayed), second.place)).rejects.toThrow(/has already run/);
    expect(mints()).toEqual([]);
  });

  it("measures a lane job's lifetime from its first start as its worker signed it, not BullMQ's processedOn", async () => {
    const { refresher, connection, store, mints, running } = await intakeAndWorker();
    const job = planJob("d-started");
    const { place } = await running(job);
    const held = { thread: "Codertocat/Hello-World#1", workId: place.id, deliveryId: job.deliveryId };
    await connection.sadd("blueprint:waiting:Codertocat/Hello-World#1", place.id);
    expect(await store.startOnThread(held)).toBe("run");
    expect(await store.startedAt(place.id, job.deliveryId)).toBeTypeOf("number");
    // Started past its lifetime, as its worker signed it: making BullMQ's start look recent changes nothing.
    const past = Date.now() - PLAN_LIFETIME_MS - 60_000;
    await connection.set(`blueprint:started:${place.id}`, signedTime(sealer, startOf(place.id, job.deliveryId), past));
    await connection.hset(`bull:${WORK_QUEUE}:${place.id}`, "processedOn", String(Date.now()));
    await expect(refresher.fresh(job, expiring(job), place)).rejects.toThrow(/past its lifetime/);
    // A start time someone else wrote (unsigned, or signed for another job) is not taken: BullMQ's start is.
    await connection.set(`blueprint:started:${place.id}`, `${Date.now()}.forged`);
    expect(await store.startedAt(place.id, job.deliveryId)).toBeNull();
    await connection.set(`blueprint:started:${place.id}`, signedTime(sealer, startOf("w-other", job.deliveryId), past));
    expect(await store.startedAt(place.id, job.deliveryId)).toBeNull();
    expect(mints()).toEqual([]);
  });

  it("mints at most one token per delivery in five minutes: a job made to look running again gets no second one", async () => {
    const { refresher, connection, mints, running } = await intakeAndWorker();
    const job = planJob("d-spaced");
    const { place } = await running(job);
    expect((await refresher.fresh(job, expiring(job), place)).refreshed).toBe(true);
    await expect(refresher.fresh(job, expiring(job), place)).rejects.toThrow(/renewed for delivery d-spaced less than/);
    expect(mints()).toHaveLength(1);
    // Five minutes on (the spacing lapsed), it is renewed again.
    await connection.del("blueprint:renewed:d-spaced");
    expect((await refresher.fresh(job, expiring(job), place)).refreshed).toBe(true);
  });
});
