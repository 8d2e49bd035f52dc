import { Octokit } from "@octokit/rest";
import { Queue, QueueEvents } from "bullmq";
import { Redis } from "ioredis";
import nock from "nock";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { JobTokens, type TokenMinter } from "../../src/github/job-token.js";
import type { Job } from "../../src/jobs/job.js";
import { JobMetrics } from "../../src/jobs/metrics.js";
import { startRedisWorkers, TRIAGE_QUEUE } from "../../src/jobs/redis-worker.js";
import { Sealer } from "../../src/jobs/sealed.js";
import { loadEnv } from "../../src/config/env.js";
import { tokenPorts } from "../../src/github/token-port.js";
import { createWorkflowDeps } from "../../src/workflow/create-deps.js";
import { tempDir } from "../helpers/git-repo.js";
import { answerTokenRequests, scopeOf, sealToken, TokenRefresher } from "../../src/jobs/token-refresh.js";
import type { Logger } from "../../src/workflow/deps.js";
import { githubDouble, INSTALLATION_ID, INSTALLATION_TOKEN } from "../helpers/github-double.js";
import { startRedisServer, type RedisServer } from "../helpers/redis-server.js";

/** Workers hold no App key: a job whose token is about to expire asks an intake, through Redis, for a fresh one. */

const quiet: Logger = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} } as unknown as Logger;
const repository = { owner: "Codertocat", name: "Hello-World", cloneUrl: "https://github.com/Codertocat/Hello-World.git", defaultBranch: "main", htmlUrl: "https://github.com/Codertocat/Hello-World" };
const planJob: Job = { kind: "plan", deliveryId: "d-1", installationId: INSTALLATION_ID, repository, number: 1, actor: "maintainer", receivedAt: Date.now(), commentId: 7, instructions: "" };

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
  const sealer = new Sealer("a-secret-shared-by-intake-and-workers");
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  const tokens = new JobTokens(async () => new Octokit({ auth: "app-jwt", request: { retries: 0 } }) as unknown as TokenMinter);
  const desk = answerTokenRequests({ connection, tokens, sealer, log: quiet, concurrency: 2 });
  const refresher = await TokenRefresher.start(redis.url, connection, sealer);
  // Someone else who can write to Redis, asking the intakes directly.
  const requests = new Queue("blueprint-token", { connection });
  const answers = new QueueEvents("blueprint-token", { connection: new Redis(redis.url, { maxRetriesPerRequest: null }) });
  await answers.waitUntilReady();
  closers.push(() => connection.quit(), () => desk.close(), () => refresher.close(), () => requests.close(), () => answers.close());
  const mints = () => github.requests.filter((request) => request.path.endsWith("/access_tokens")).map((request) => request.body);
  const ask = async (data: unknown) => (await requests.add("refresh", data)).waitUntilFinished(answers, 10_000);
  return { sealer, refresher, mints, ask };
}

/** A token an intake sealed for `job` that expires in a minute. */
const expiring = (sealer: Sealer, job: Job) => sealToken(sealer, { token: "ghs_OldToken000", expiresAt: new Date(Date.now() + 60_000).toISOString(), permissions: {} }, scopeOf(job));

describe("fresh job tokens through an intake", () => {
  it("renews a token an intake sealed, for the repository and the kind of job it was minted for", async () => {
    const { sealer, refresher, mints } = await intakeAndWorker();
    const { sealedToken, refreshed } = await refresher.fresh(planJob, expiring(sealer, planJob));
    expect(refreshed).toBe(true);
    expect(JSON.parse(sealer.open(sealedToken))).toMatchObject({ token: INSTALLATION_TOKEN, scope: scopeOf(planJob) });
    expect(mints()).toEqual([{ repositories: ["Hello-World"], permissions: { contents: "read", issues: "write", pull_requests: "write", metadata: "read" } }]);
  });

  it("mints nothing for a request written into Redis that names another repository or asks for more than the token had", async () => {
    const { sealer, refresher, mints, ask } = await intakeAndWorker();
    const elsewhere: Job = { ...planJob, kind: "build", revision: null, steps: [], force: false, fresh: false, notes: "", repository: { ...repository, name: "secrets" } } as Job;
    // No sealed token at all (the request as workers used to send it).
    await expect(ask({ job: elsewhere })).rejects.toThrow();
    // A real job's sealed token, moved onto a job for another repository.
    await expect(ask({ job: elsewhere, sealedToken: expiring(sealer, planJob) })).rejects.toThrow(/another repository/);
    // A worker does not use (or renew) a token moved onto another repository's job either.
    await expect(refresher.fresh(elsewhere, expiring(sealer, planJob))).rejects.toThrow(/another repository/);
    expect(mints()).toEqual([]);

    // The right repository, but a build (write to contents) on the token of a plan: minted as for the plan.
    const asBuild = { ...elsewhere, repository };
    const answer = await ask({ job: asBuild, sealedToken: expiring(sealer, planJob) });
    expect(JSON.parse(sealer.open(String(answer)))).toMatchObject({ scope: { kind: "plan", repository: "Hello-World" } });
    expect(mints()).toEqual([{ repositories: ["Hello-World"], permissions: { contents: "read", issues: "write", pull_requests: "write", metadata: "read" } }]);
  });
});

describe("a worker given a job whose token is not for it", () => {
  it("fails the job at once instead of asking for a fresh token every 30 seconds for a day", async () => {
    const sealer = new Sealer("a-secret-shared-by-intake-and-workers");
    const env = loadEnv({ BLUEPRINT_WORKDIR: tempDir("blueprint-workdir-"), BLUEPRINT_STATE_SECRET: "a-state-secret-for-the-tests-0000", PATH: process.env.PATH ?? "" });
    const workers = await startRedisWorkers({ redisUrl: redis.url, deps: createWorkflowDeps(env, quiet), ports: tokenPorts(env, quiet), sealer, concurrency: 1, lockMs: 30_000, metrics: new JobMetrics({ processMetrics: false }) });
    const connection = new Redis(redis.url, { maxRetriesPerRequest: null });
    const triage = new Queue(TRIAGE_QUEUE, { connection });
    closers.push(() => connection.quit(), () => triage.close(), () => workers.close());

    // A job for another repository carrying a real job's sealed token (written into Redis by someone else).
    const elsewhere: Job = { ...planJob, deliveryId: "d-2", repository: { ...repository, name: "secrets" } };
    const queued = await triage.add("plan", { job: elsewhere, keys: [], sealedToken: expiring(sealer, planJob) }, { jobId: "t-d-2" });
    const deadline = Date.now() + 10_000;
    let state = await queued.getState();
    while (state !== "failed" && state !== "delayed" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      state = await queued.getState();
    }
    expect(state).toBe("failed");
    expect((await triage.getJob("t-d-2"))?.failedReason).toMatch(/another repository/);
  });
});
