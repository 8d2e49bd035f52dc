import { existsSync } from "node:fs";
import nock from "nock";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REMOVED_REASON, type Job, type Removal } from "../../src/jobs/job.js";
import { signRemoval, WORK_QUEUE } from "../../src/jobs/job-wire.js";
import { RedisStore } from "../../src/jobs/store/redis.js";
import { Sealer } from "../../src/credentials/index.js";
import { RepoCache } from "../../src/workspace/repo-cache.js";
import { WorkdirKeeper } from "../../src/workspace/workdir-keeper.js";
import { createBareRepo, tempDir } from "../helpers/git-repo.js";
import { INSTALLATION_ID } from "../helpers/github-double.js";
import { useRedis } from "../helpers/redis-server.js";
import { startTestWorkers } from "../helpers/redis-workers.js";
import { eventually, finished, planJob, sealedFor, sealer } from "../helpers/redis-jobs.js";

/** An uninstall with Redis: every worker hears it, signed; waiting jobs find it recorded. */

const redis = useRedis({ queues: [WORK_QUEUE] });
beforeAll(() => {
  nock.disableNetConnect();
  nock.enableNetConnect("127.0.0.1");
});
afterAll(() => nock.enableNetConnect());

/**
 * A queue worker whose job runner is this test: lane work holds its repository in the worker's work
 * directory (as the runner's use case would) until it is stopped.
 */
async function worker() {
  const workdir = tempDir("blueprint-workdir-");
  const cache = new RepoCache(workdir);
  const keeper = new WorkdirKeeper(cache);
  const bare = createBareRepo({ "README.md": "# Hello\n" });
  const stopped: Array<{ deliveryId: string; reason: unknown; treeThere: boolean }> = [];
  const ran: string[] = [];
  /** Jobs whose worktree is checked out. */
  const holding: string[] = [];
  const { workers, log } = await startTestWorkers(redis.url, {
    workdir,
    runWork: (job, _token, signal) => {
      ran.push(job.deliveryId);
      const owner = {
        installationId: job.installationId,
        owner: job.repository.owner,
        name: job.repository.name,
        cloneUrl: bare.url,
      };
      return keeper.use(owner, async () => {
        const tree = await cache.prepare({ cloneUrl: bare.url, ref: "refs/heads/main" });
        holding.push(job.deliveryId);
        if (!signal.aborted)
          await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
        stopped.push({
          deliveryId: job.deliveryId,
          reason: signal.reason,
          treeThere: existsSync(tree.dir) && existsSync(cache.mirrorPath(bare.url)),
        });
        await tree.dispose();
      });
    },
    removeFiles: (removal) => void keeper.remove(removal),
  });
  redis.closers.push(() => workers.close());
  return { log, cache, keeper, bare, stopped, ran, holding };
}

/** The Redis store, as an intake and triage use it. */
function store(): RedisStore {
  const made = new RedisStore({ connection: redis.connection, sealer, concurrency: 2 });
  redis.closers.push(() => made.close());
  return made;
}

/** Lane work as triage queues it: waiting on its thread, signed, in the work queue. */
async function queueWork(job: Job): Promise<string> {
  await store().enqueueWork(job, { keys: [], sealedToken: sealedFor(job) });
  return `w-${job.deliveryId}`;
}

describe("a removal with Redis", () => {
  it("stops the running job of the removed repository, removes its files once it ended, and drops a waiting one when its turn comes", async () => {
    const { cache, bare, stopped, ran, holding } = await worker();
    const running = planJob("d-running");
    await queueWork(running);
    await eventually(async () => (holding.includes("d-running") ? true : undefined), "the job to check its tree out");

    const removal: Removal = {
      deliveryId: "d-removed",
      installationId: INSTALLATION_ID,
      repositories: [{ owner: "codertocat", name: "hello-world" }],
      receivedAt: Date.now(),
    };
    await store().recordRemoval(removal);

    await eventually(async () => (stopped.length > 0 ? true : undefined), "the running job to stop");
    expect(stopped).toEqual([{ deliveryId: "d-running", reason: REMOVED_REASON, treeThere: true }]);
    await eventually(
      async () => (existsSync(cache.mirrorPath(bare.url)) ? undefined : true),
      "the repository's files to go",
    );

    // Received before the removal, its turn after it: dropped without running. One received after it (the repository
    // added back) runs.
    const waiting = await queueWork(planJob("d-waiting", { receivedAt: removal.receivedAt - 1, number: 2 }));
    expect(await (await finished(redis.queue(WORK_QUEUE), waiting)).getState()).toBe("completed");
    await queueWork(planJob("d-after", { receivedAt: removal.receivedAt + 1, number: 3 }));
    await eventually(async () => (ran.includes("d-after") ? true : undefined), "the later job to run");
    expect(ran).toEqual(["d-running", "d-after"]);
  });

  it("ignores a removal that no intake signed", async () => {
    const { cache, bare, keeper, log } = await worker();
    await keeper.use(
      { installationId: INSTALLATION_ID, owner: "Codertocat", name: "Hello-World", cloneUrl: bare.url },
      async () => (await cache.prepare({ cloneUrl: bare.url, ref: "refs/heads/main" })).dispose(),
    );
    const removal: Removal = {
      deliveryId: "d-forged",
      installationId: INSTALLATION_ID,
      repositories: null,
      receivedAt: Date.now(),
    };
    await redis.connection.publish(
      RedisStore.REMOVE_CHANNEL,
      signRemoval(new Sealer("another-secret-of-some-length-000"), removal),
    );
    await redis.connection.publish(RedisStore.REMOVE_CHANNEL, JSON.stringify({ removal }));
    await eventually(
      async () =>
        log.lines.filter((line) => line.message.includes("no intake signed")).length === 2 ? true : undefined,
      "both to be refused",
    );
    expect(existsSync(cache.mirrorPath(bare.url))).toBe(true);
  });
});
