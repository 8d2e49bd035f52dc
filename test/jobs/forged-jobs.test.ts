import { Queue } from "bullmq";
import { Redis } from "ioredis";
import nock from "nock";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Job } from "../../src/jobs/job.js";
import { RedisStore } from "../../src/jobs/store/redis.js";
import { openToken, Sealer } from "../../src/credentials/index.js";
import { TRIAGE_QUEUE, verifiedWire, WORK_QUEUE } from "../../src/jobs/job-wire.js";
import { commentPayload, startTestApp } from "../helpers/app.js";
import { APP_ID, githubDouble, INSTALLATION_TOKEN, type GitHubDouble } from "../helpers/github-double.js";
import { startRedisServer, type RedisServer } from "../helpers/redis-server.js";
import { startTestWorkers } from "../helpers/redis-workers.js";
import {
  buildJob,
  eventually,
  finished,
  helpJob,
  planJob,
  rawData,
  repository,
  sealedFor,
  sealer,
  signedWire,
} from "../helpers/redis-jobs.js";

/**
 * docs/security.md: a worker trusts nothing in Redis that the intake did not sign. Each job here is written into Redis
 * by someone else.
 */

let redis: RedisServer;
let connection: Redis;
let triage: Queue;
let work: Queue;
beforeAll(async () => {
  redis = await startRedisServer();
  connection = new Redis(redis.url, { maxRetriesPerRequest: null });
  triage = new Queue(TRIAGE_QUEUE, { connection });
  work = new Queue(WORK_QUEUE, { connection });
  nock.disableNetConnect();
  nock.enableNetConnect("127.0.0.1");
});
afterAll(async () => {
  await Promise.all([triage.close(), work.close()]);
  await connection.quit();
  nock.enableNetConnect();
  await redis.stop();
});

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await connection.flushall();
  nock.cleanAll();
});

/**
 * A worker process's queue workers, on GitHub's double (api.github.com through nock); two slots, so a job never waits
 * behind the one before it.
 */
async function worker(github: GitHubDouble = githubDouble({ permissions: { maintainer: "write" } })) {
  const { workers, log } = await startTestWorkers(redis.url);
  closers.push(() => workers.close());
  return {
    github,
    log,
    refusedLines: () => log.lines.filter((line) => line.level === "error" && line.message.startsWith("refused")),
  };
}

describe("a job in Redis that the intake did not sign", () => {
  it("an unsigned job fails without running: logged with its delivery id, nothing asked of GitHub, no token left in it", async () => {
    const { github, refusedLines } = await worker();
    const job = helpJob("d-unsigned");
    await triage.add("help", { job, keys: [], sealedToken: sealedFor(job) }, { jobId: "t-d-unsigned" });
    const done = await finished(triage, "t-d-unsigned");
    expect(await done.getState()).toBe("failed");
    expect(done.failedReason).toMatch(/not a signed job/);
    expect(refusedLines()).toEqual([
      expect.objectContaining({ fields: expect.objectContaining({ deliveryId: "d-unsigned" }) }),
    ]);
    expect(github.requests).toEqual([]);
    expect(await rawData(connection, TRIAGE_QUEUE, "t-d-unsigned")).not.toContain("sealedToken");
  });

  it("a signed job changed in Redis (its clone URL, repository or actor) fails without running", async () => {
    const { github, refusedLines } = await worker();
    const changes: Array<[string, (job: Job) => Job]> = [
      [
        "clone",
        (job) => ({ ...job, repository: { ...job.repository, cloneUrl: "https://attacker.example/loot.git" } }),
      ],
      ["repo", (job) => ({ ...job, repository: { ...job.repository, name: "secrets" } })],
      ["actor", (job) => ({ ...job, actor: "mallory" })],
    ];
    for (const [name, change] of changes) {
      const id = `t-d-${name}`;
      const wire = signedWire(TRIAGE_QUEUE, id, helpJob(`d-${name}`));
      await triage.add("help", { ...wire, job: change(wire.job) }, { jobId: id });
      const done = await finished(triage, id);
      expect([name, await done.getState(), done.failedReason]).toEqual([
        name,
        "failed",
        expect.stringMatching(/does not carry a valid signature/),
      ]);
    }
    expect(refusedLines().map((line) => line.fields.deliveryId)).toEqual(["d-clone", "d-repo", "d-actor"]);
    expect(github.requests).toEqual([]);
  });

  it("a job signed with another secret, or signed for another queue, fails without running", async () => {
    const { github } = await worker();
    const other = new Sealer("another-secret-of-some-length-000");
    await triage.add("help", signedWire(TRIAGE_QUEUE, "t-d-other", helpJob("d-other"), { by: other }), {
      jobId: "t-d-other",
    });
    // Signed for triage (where the actor's permission is checked), copied into the work queue to skip it.
    await work.add("plan", signedWire(TRIAGE_QUEUE, "w-d-skip", planJob("d-skip")), { jobId: "w-d-skip" });
    for (const [queue, id] of [
      [triage, "t-d-other"],
      [work, "w-d-skip"],
    ] as const) {
      const done = await finished(queue, id);
      expect([id, await done.getState(), done.failedReason]).toEqual([
        id,
        "failed",
        expect.stringMatching(/does not carry a valid signature/),
      ]);
    }
    expect(github.requests).toEqual([]);
  });

  it("a signed job carrying a token sealed for another job (another delivery, repository or kind) fails without using it, and keeps no token", async () => {
    const { github } = await worker();
    const donors: Array<[string, Job]> = [
      ["delivery", helpJob("d-donor")],
      ["repository", { ...helpJob("d-moved-repository"), repository: { ...repository, name: "secrets" } }],
      ["kind", planJob("d-moved-kind")],
    ];
    for (const [name, donor] of donors) {
      const id = `t-d-moved-${name}`;
      await triage.add(
        "help",
        signedWire(TRIAGE_QUEUE, id, helpJob(`d-moved-${name}`), { sealedToken: sealedFor(donor) }),
        { jobId: id },
      );
      const done = await finished(triage, id);
      expect([name, await done.getState(), done.failedReason]).toEqual([
        name,
        "failed",
        expect.stringMatching(/was not sealed for this job/),
      ]);
      expect(await rawData(connection, TRIAGE_QUEUE, id)).not.toContain("sealedToken");
    }
    expect(github.requests).toEqual([]);
  });
});

describe("a build job checked against GitHub before it builds", () => {
  /**
   * A signed build job (as if whoever wrote it held the secret) for `comment`, through triage; the work job as it ends.
   */
  async function build(name: string, job: Job) {
    await triage.add("build", signedWire(TRIAGE_QUEUE, `t-${name}`, job), { jobId: `t-${name}` });
    expect(await (await finished(triage, `t-${name}`)).getState()).toBe("completed");
    return finished(work, `w-${name}`);
  }

  it("refuses a /build whose comment does not exist (on its thread), is by someone else, was made at another time or says something else; builds the one GitHub confirms", async () => {
    // The maintainer's `/build` on another issue of the repository (the comments endpoint is per repository).
    const elsewhere = new Date().toISOString();
    const onAnotherIssue = nock("https://api.github.com")
      .get("/repos/Codertocat/Hello-World/issues/comments/555")
      .reply(200, {
        id: 555,
        body: "/build",
        user: { login: "maintainer", type: "User" },
        issue_url: "https://api.github.com/repos/Codertocat/Hello-World/issues/2",
        html_url: "",
        node_id: "IC_555",
        created_at: elsewhere,
        updated_at: elsewhere,
      });
    const { github, log } = await worker();
    const byMaintainer = github.addUserComment("maintainer", "/build");
    const byMallory = github.addUserComment("mallory", "/build");
    const steps = github.addUserComment("maintainer", "/build S1 --force");
    const made = byMaintainer.created_at;
    const cases: Array<[string, Partial<Extract<Job, { kind: "build" }>>, RegExp]> = [
      ["d-missing", { commentId: 424242, commandCreatedAt: made }, /does not exist/],
      ["d-elsewhere", { commentId: 555, commandCreatedAt: elsewhere }, /does not exist on this thread/],
      ["d-author", { commentId: byMallory.id, commandCreatedAt: byMallory.created_at }, /by @mallory, not @maintainer/],
      [
        "d-time",
        { commentId: byMaintainer.id, commandCreatedAt: new Date(Date.parse(made) - 3600_000).toISOString() },
        /was made at/,
      ],
      [
        "d-text",
        { commentId: steps.id, commandCreatedAt: steps.created_at },
        /does not read as this `\/build` command/,
      ],
    ];
    for (const [name, changes, reason] of cases) {
      const done = await build(name, buildJob(name, changes));
      expect([name, await done.getState(), done.failedReason]).toEqual([name, "failed", expect.stringMatching(reason)]);
      expect(await rawData(connection, WORK_QUEUE, `w-${name}`)).not.toContain("sealedToken");
    }
    expect(onAnotherIssue.isDone()).toBe(true);
    const refused = log.lines.filter((line) => line.message.startsWith("refused a build job"));
    expect(refused.map((line) => line.fields.deliveryId)).toEqual(cases.map(([name]) => name));
    // Nothing built. A comment by someone else or made at another time is a forgery, logged only; one gone from the
    // thread or reading as another command is what deleting or editing it before the job ran leaves: said there.
    const again = "Comment `/build` again (a new comment: an edited one is not read as a command) to build the plan.";
    expect(github.botComments().map((comment) => comment.body)).toEqual([
      `@maintainer's \`/build\` is no longer on this thread (it was deleted before its build started), so nothing is built. ${again}`,
      `@maintainer's \`/build\` is no longer on this thread (it was deleted before its build started), so nothing is built. ${again}`,
      `@maintainer's \`/build\` was edited before its build started and no longer reads as the command it was, so nothing is built. ${again}`,
    ]);

    // The same command that GitHub confirms goes on to the build (which finds no plan to build, and says so).
    const confirmed = await build(
      "d-confirmed",
      buildJob("d-confirmed", { commentId: byMaintainer.id, commandCreatedAt: made }),
    );
    expect(await confirmed.getState()).toBe("completed");
    expect(github.botComments().at(-1)?.body).toBe("There is no plan to build here yet. Comment `/plan` first.");
  });

  it("a /build deleted, or edited, before its job ran builds nothing and says so on the thread", async () => {
    const { github, log } = await worker();
    const deleted = github.addUserComment("maintainer", "/build");
    const edited = github.addUserComment("maintainer", "/build");
    // As the intake had them from their webhooks; then, while they waited, one was deleted and the other reworded.
    const jobs = [deleted, edited].map((comment, index) =>
      buildJob(`d-changed-${index}`, { commentId: comment.id, commandCreatedAt: comment.created_at }),
    );
    github.comments.splice(github.comments.indexOf(deleted), 1);
    edited.body = "/build --force";
    for (const [index, job] of jobs.entries()) {
      const done = await build(`d-changed-${index}`, job);
      expect(await done.getState()).toBe("failed");
    }
    expect(github.botComments().map((comment) => comment.body)).toEqual([
      expect.stringMatching(
        /^@maintainer's `\/build` is no longer on this thread \(it was deleted before its build started\), so nothing is built\. Comment `\/build` again/,
      ),
      expect.stringMatching(
        /^@maintainer's `\/build` was edited before its build started and no longer reads as the command it was, so nothing is built\./,
      ),
    ]);
    expect(log.lines.filter((line) => line.message.startsWith("refused a build job"))).toHaveLength(2);
  });

  it("refuses an approving review that GitHub does not have as the job says", async () => {
    const submittedAt = new Date().toISOString();
    const review = {
      id: 77,
      user: { login: "maintainer", type: "User" },
      state: "APPROVED",
      commit_id: "a".repeat(40),
      submitted_at: submittedAt,
      body: "",
    };
    const { log } = await worker(
      githubDouble({
        permissions: { maintainer: "write" },
        pullRequest: { headRef: "feature", headSha: "a".repeat(40), baseRef: "main" },
        reviews: [review, { ...review, id: 78, state: "COMMENTED" }],
      }),
    );
    const approval = (deliveryId: string, changes: Record<string, unknown>) =>
      ({
        kind: "review-approval",
        deliveryId,
        installationId: planJob("x").installationId,
        repository,
        number: 1,
        actor: "maintainer",
        receivedAt: Date.now(),
        reviewId: 77,
        commitId: "a".repeat(40),
        submittedAt,
        body: "",
        ...changes,
      }) as Job;
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ["d-r-missing", { reviewId: 5 }, /does not exist/],
      ["d-r-author", { actor: "mallory" }, /by @maintainer, not @mallory/],
      ["d-r-state", { reviewId: 78 }, /is COMMENTED, not an approval/],
      ["d-r-time", { submittedAt: new Date(Date.parse(submittedAt) - 60_000).toISOString() }, /was submitted at/],
      ["d-r-commit", { commitId: "b".repeat(40) }, /approved commit a+, not b+/],
    ];
    for (const [name, changes, reason] of cases) {
      const done = await build(name, approval(name, changes));
      expect([name, await done.getState(), done.failedReason]).toEqual([name, "failed", expect.stringMatching(reason)]);
    }
    expect(
      log.lines.filter((line) => line.message.startsWith("refused a build job")).map((line) => line.fields.deliveryId),
    ).toEqual(cases.map(([name]) => name));
  });

  it("refuses a Build plan click whose check run is not Blueprint's plan check for that thread, revision and commit; builds on the one GitHub confirms", async () => {
    const { github, log } = await worker();
    const sha = "c".repeat(40);
    const plan = github.addCheckRun({ head_sha: sha, external_id: "blueprint-plan:#1:v1" });
    const impostor = github.addCheckRun({
      head_sha: sha,
      external_id: "blueprint-plan:#1:v1",
      app: { id: 99, slug: "impostor" },
    });
    const buildCheck = github.addCheckRun({
      name: "Blueprint build",
      head_sha: sha,
      external_id: "blueprint-plan:#1:v1",
    });
    const otherThread = github.addCheckRun({ head_sha: sha, external_id: "blueprint-plan:#2:v1" });
    // As the intake makes it from a click; `app` is what the webhook said, so a forger names Blueprint's.
    const click = (deliveryId: string, changes: Partial<Extract<Job, { kind: "check-action" }>>): Job => ({
      kind: "check-action",
      deliveryId,
      installationId: planJob("x").installationId,
      repository,
      number: 1,
      actor: "maintainer",
      receivedAt: Date.now(),
      action: "build",
      revision: 1,
      headSha: sha,
      checkRunId: plan.id,
      app: { id: APP_ID, slug: "blueprint" },
      clickedAt: new Date().toISOString(),
      ...changes,
    });
    const cases: Array<[string, Partial<Extract<Job, { kind: "check-action" }>>, RegExp]> = [
      ["d-c-missing", { checkRunId: 424242 }, /check run 424242 does not exist/],
      ["d-c-app", { checkRunId: impostor.id }, /was made by another app/],
      ["d-c-name", { checkRunId: buildCheck.id }, /is "Blueprint build", not "Blueprint plan"/],
      ["d-c-thread", { checkRunId: otherThread.id }, /is for blueprint-plan:#2:v1, not blueprint-plan:#1:v1/],
      ["d-c-revision", { revision: 2 }, /is for blueprint-plan:#1:v1, not blueprint-plan:#1:v2/],
      ["d-c-commit", { headSha: "d".repeat(40) }, /is on commit c+, not d+/],
    ];
    for (const [name, changes, reason] of cases) {
      const done = await build(name, click(name, changes));
      expect([name, await done.getState(), done.failedReason]).toEqual([name, "failed", expect.stringMatching(reason)]);
    }
    expect(
      log.lines.filter((line) => line.message.startsWith("refused a build job")).map((line) => line.fields.deliveryId),
    ).toEqual(cases.map(([name]) => name));
    expect(github.botComments()).toEqual([]);

    // The click GitHub confirms goes on to the build (which finds no plan to build, and says so).
    const confirmed = await build("d-c-confirmed", click("d-c-confirmed", {}));
    expect(await confirmed.getState()).toBe("completed");
    expect(github.botComments().map((comment) => comment.body)).toEqual([
      "There is no plan to build here yet. Comment `/plan` first.",
    ]);
  });
});

describe("what a job keeps in Redis once it has run", () => {
  it("a completed job and a failed one keep no sealed token", async () => {
    const { github } = await worker();
    const help = helpJob("d-help");
    const token = sealedFor(help);
    await triage.add("help", signedWire(TRIAGE_QUEUE, "t-d-help", help, { sealedToken: token }), { jobId: "t-d-help" });
    const completed = await finished(triage, "t-d-help");
    expect(await completed.getState()).toBe("completed");
    expect(github.botComments()).toHaveLength(1);

    // A signed job that fails as it runs: its /build comment is not on GitHub.
    const build = buildJob("d-fails", { commentId: 424242 });
    const store = new RedisStore({ connection, sealer, concurrency: 2 });
    closers.push(() => store.close());
    await store.enqueueWork(build, { keys: [], sealedToken: sealedFor(build) });
    const failed = await finished(work, "w-d-fails");
    expect(await failed.getState()).toBe("failed");

    for (const [queue, id, job] of [
      [TRIAGE_QUEUE, "t-d-help", completed],
      [WORK_QUEUE, "w-d-fails", failed],
    ] as const) {
      const raw = await rawData(connection, queue, id);
      expect(raw).toContain(`"deliveryId":"${(job.data as { job: Job }).job.deliveryId}"`);
      expect(raw).not.toContain("sealedToken");
    }
    expect(await rawData(connection, TRIAGE_QUEUE, "t-d-help")).not.toContain(token);
  });
});

describe("the intake", () => {
  it("mints no token for a job in its mint queue that no intake signed: it fails at once, never reaching triage", async () => {
    const github = githubDouble({ permissions: { maintainer: "write" } });
    const app = await startTestApp({ REDIS_URL: redis.url, BLUEPRINT_WORKERS: "0" });
    closers.push(() => app.blueprint.shutdown(5_000));
    const mint = new Queue("blueprint-mint", { connection });
    closers.push(() => mint.close());
    await mint.add("help", signedWire("blueprint-mint", "m-d-other", helpJob("d-forged")), {
      jobId: "m-d-forged",
      // As the intake adds a mint job: a refusal is never retried.
      attempts: 5,
    });
    const done = await finished(mint, "m-d-forged");
    expect([await done.getState(), done.attemptsMade]).toEqual(["failed", 1]);
    expect(done.failedReason).toMatch(/does not carry a valid signature/);
    expect(await connection.exists("bull:blueprint-triage:t-d-forged")).toBe(0);
    expect(github.requests.filter((request) => request.path.includes("/access_tokens"))).toEqual([]);
  });

  it("signs what it enqueues, and refuses a webhook whose repository.clone_url is not on the configured GitHub", async () => {
    githubDouble({ permissions: { maintainer: "write" } });
    const app = await startTestApp({ REDIS_URL: redis.url, BLUEPRINT_WORKERS: "0" });
    closers.push(() => app.blueprint.shutdown(5_000));
    const receive = (id: string, cloneUrl: string) =>
      app.probot.receive({
        id,
        name: "issue_comment",
        payload: commentPayload({ body: "/help", cloneUrl }),
      } as Parameters<typeof app.probot.receive>[0]);

    await receive("d-elsewhere", "https://attacker.example/Codertocat/Hello-World.git");
    await receive("d-github", "https://github.com/Codertocat/Hello-World.git");
    const queued = await eventually(() => triage.getJob("t-d-github"), "the accepted webhook reaching triage");
    const wire = verifiedWire(sealer, { queue: TRIAGE_QUEUE, id: "t-d-github" }, queued.data);
    expect(openToken(sealer, wire.sealedToken, wire.job).token).toBe(INSTALLATION_TOKEN);
    expect(await connection.exists("bull:blueprint-mint:m-d-elsewhere", "bull:blueprint-triage:t-d-elsewhere")).toBe(0);
    expect(await app.blueprint.metrics.registry.getSingleMetricAsString("blueprint_webhooks_total")).toMatch(
      /outcome="refused"} 1/,
    );
  });
});
