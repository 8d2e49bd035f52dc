import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, type AppProcess } from "./support/app-process.js";
import {
  expectBuildFinishedOnce,
  fileRedis,
  hold,
  isPlanning,
  killRunnerUntilItGivesUp,
  planJobs,
  reactionsTo,
  startCluster,
  turnOf,
  type Cluster,
} from "./support/cluster.js";
import { STEP_COMMITS, stepOf } from "./support/greeter-scenario.js";
import { childrenOf, environmentOf, isRunning, jobRunnerOf, niceOf } from "./support/processes.js";
import type { WorkerProcess } from "./support/worker-process.js";

/** One redis-server for the file; each describe's cluster flushes it when it stops. */
const redis = fileRedis();

/**
 * docs/reliability.md across replicas: real `redis-server`, real intake and worker processes, the local GitHub
 * double and a scripted model. Each issue is its own scenario, so the tests share one cluster.
 */

/** SIGSTOP / SIGCONT to a replica's whole process group (it runs in its own). */
const freeze = (replica: AppProcess | undefined, signal: "SIGSTOP" | "SIGCONT") =>
  replica && process.kill(-replica.pid, signal);

describe("two replicas of `npm start` on one Redis", () => {
  let cluster: Cluster;
  let a: AppProcess;
  let b: AppProcess;

  beforeAll(async () => {
    cluster = await startCluster({ issues: 3, redis: redis() });
    // Locks outlast a replica frozen for a few seconds (the /cancel test): nothing here is taken over.
    [a, b] = await Promise.all([
      cluster.startIntake({ BLUEPRINT_JOB_LOCK_MS: "20000" }),
      cluster.startIntake({ BLUEPRINT_JOB_LOCK_MS: "20000" }),
    ]);
  });
  afterAll(async () => cluster?.stop());

  it("each replica works jobs in a queue worker it forks (lane work in that worker's job runner), each below the other's CPU priority, neither holding the App's private key or webhook secret", async () => {
    for (const replica of [a, b]) {
      const worker = childrenOf(replica.pid).find((child) => / \S*\/lib\/worker\.js\b/.test(child.cmdline));
      expect(worker, "the replica's queue worker").toBeDefined();
      // The worker forks its runner as it starts (it may still be starting), then lowers the runner's priority.
      const runnerOf = () => jobRunnerOf(worker?.pid ?? -1);
      await expect
        .poll(() => {
          const found = runnerOf();
          return found !== undefined && niceOf(found.pid) > niceOf(worker?.pid ?? -1);
        })
        .toBe(true);
      const runner = runnerOf();
      expect(niceOf(worker?.pid ?? -1)).toBeGreaterThan(niceOf(replica.pid));
      for (const pid of [worker?.pid ?? -1, runner?.pid ?? -1]) {
        expect(environmentOf(pid)).not.toContain("PRIVATE_KEY");
        expect(environmentOf(pid)).not.toContain("WEBHOOK_SECRET");
      }
      // The replica itself holds them (so the checks above could fail).
      expect(environmentOf(replica.pid)).toContain("PRIVATE_KEY");
    }
  });

  it("redeliveries of one webhook spread over both replicas start one job", async () => {
    const { comment, event } = cluster.type(1, "/plan greet by name");
    const delivery = randomUUID();
    const statuses = await Promise.all([a, b, a, b, a, b].map((replica) => cluster.deliver(replica, event, delivery)));
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    await cluster.waitFor("the plan", () =>
      cluster.github.state.botComments(1).some((c) => c.body.includes("Plan v1")),
    );
    await cluster.waitForQuiet();
    expect(cluster.github.state.botComments(1)).toHaveLength(1);
    expect(reactionsTo(cluster, comment.id)).toBe(1);
    expect(cluster.model.requests.filter((r) => isPlanning(r) && turnOf(r) === 0)).toHaveLength(1);
    // The job ran in one replica's queue worker; each replica's /metrics has its worker's jobs. A worker counts a job
    // once it has ended, which can be after its plan was posted: the count is awaited.
    await expect.poll(async () => (await planJobs(a.url, "done")) + (await planJobs(b.url, "done"))).toBe(1);
  });

  it("two commands on one thread, delivered to different replicas, run one after the other", async () => {
    const before = cluster.model.requests.length;
    const gate = hold(
      cluster,
      (request) => isPlanning(request) && turnOf(request) === 0 && cluster.model.requests.length === before + 1,
    );
    expect(await cluster.deliver(a, cluster.type(2, "/plan greet by name").event)).toBe(200);
    await cluster.waitFor("the first planning request", () => gate.held() === 1);
    expect(await cluster.deliver(b, cluster.type(2, "/plan greet by name, once more").event)).toBe(200);
    await cluster.waitFor("the Queued notice", () =>
      cluster.github.state
        .botComments(2)
        .some((c) => c.body.startsWith("Queued: Blueprint is busy on this thread (planning for @maintainer)")),
    );
    gate.release();
    await cluster.waitFor("plan v2", () => cluster.github.state.botComments(2).some((c) => c.body.includes("Plan v2")));
    await cluster.waitForQuiet();
    // Two whole conversations, the second begun after the first submitted its plan: never interleaved.
    const turns = cluster.model.requests.slice(before).map(turnOf);
    expect(turns).toEqual([0, 1, 2, 0, 1, 2]);
  });

  it("/cancel received by a replica that is not running the job stops it", async () => {
    const before = cluster.model.requests.length;
    const gate = hold(cluster, (request) => isPlanning(request) && turnOf(request) === 1);
    const planDelivery = randomUUID();
    expect(await cluster.deliver(a, cluster.type(3, "/plan greet by name").event, planDelivery)).toBe(200);
    await cluster.waitFor("planning to be under way", () => gate.held() === 1);
    // 1. Which replica runs the job (either may take it from the shared queue): its log says so.
    const started = (replica: AppProcess) =>
      replica
        .output()
        .split("\n")
        .some((line) => line.includes('"msg":"job started"') && line.includes(planDelivery));
    const runner = [a, b].find(started);
    const other = runner === a ? b : a;
    expect(runner).toBeDefined();
    expect(started(other)).toBe(false);
    // 2. The runner is frozen (SIGSTOP) while the other replica takes the /cancel: only the other can handle it.
    freeze(runner, "SIGSTOP");
    try {
      expect(await cluster.deliver(other, cluster.type(3, "/cancel").event)).toBe(200);
      await cluster.waitFor("the stop reply", () =>
        cluster.github.state
          .botComments(3)
          .some((c) => c.body.startsWith("Stopping planning for @maintainer at the next safe point.")),
      );
    } finally {
      freeze(runner, "SIGCONT");
    }
    // 3. Thawed, the runner hears the cancel through Redis and stops the job itself.
    await cluster.waitFor("planning to end", () =>
      cluster.github.state
        .botComments(3)
        .some((c) => /^## ❌ Planning failed/.test(c.body) && c.body.includes("cancelled")),
    );
    gate.release();
    await cluster.waitForQuiet();
    // The held request was the last one: the plan was never submitted, and nobody took the job over.
    expect(cluster.model.requests.slice(before).map(turnOf)).toEqual([0, 1]);
    expect(cluster.github.state.botComments(3).some((c) => c.body.includes("Plan v1"))).toBe(false);
    expect(other.output()).not.toContain("taking over a job");
  });
});

describe("an intake that only takes webhooks, and two `npm run worker` processes", () => {
  let cluster: Cluster;
  let intake: AppProcess;
  let workers: WorkerProcess[];
  /** Where each worker serves /healthz and /metrics (PORT set on both). */
  let workerPorts: Map<WorkerProcess, number>;

  beforeAll(async () => {
    cluster = await startCluster({ issues: 2, redis: redis() });
    intake = await cluster.startIntake({ BLUEPRINT_WORKERS: "0" });
    const ports = [await freePort(), await freePort()];
    workers = await Promise.all(ports.map((port) => cluster.startWorker({ PORT: String(port) })));
    workerPorts = new Map(workers.map((worker, index) => [worker, ports[index]!]));
  });
  afterAll(async () => cluster?.stop());

  it("workers hold neither the App's private key nor its webhook secret, and do the jobs", async () => {
    for (const worker of workers) {
      const environment = worker.environment();
      expect(environment.REDIS_URL).toBe(cluster.redis?.url);
      expect(Object.keys(environment)).not.toContain("PRIVATE_KEY");
      expect(Object.keys(environment)).not.toContain("WEBHOOK_SECRET");
      // Lane work runs in a job runner the worker forks below its own CPU priority, so triage (the 👀) goes first.
      const runner = jobRunnerOf(worker.pid);
      expect(runner, "the worker's job runner").toBeDefined();
      expect(niceOf(runner?.pid ?? -1)).toBeGreaterThan(niceOf(worker.pid));
      expect(environmentOf(runner?.pid ?? -1)).toContain("REDIS_URL");
      expect(environmentOf(runner?.pid ?? -1)).not.toContain("PRIVATE_KEY");
    }
    const { comment, event } = cluster.type(1, "/plan greet by name");
    expect(await cluster.deliver(intake, event)).toBe(200);
    await cluster.waitFor("the plan", () =>
      cluster.github.state.botComments(1).some((c) => c.body.includes("Plan v1")),
    );
    expect(reactionsTo(cluster, comment.id)).toBe(1);
    expect(workers.some((worker) => worker.output().includes('"msg":"job started"'))).toBe(true);
    expect(intake.output()).not.toContain('"msg":"job started"');
    // The intake's /healthz sees the workers through Redis; a worker with PORT serves its own pages.
    const health = (await (await fetch(`${intake.url}/healthz`)).json()) as {
      queue: { backend: string; workers: number };
    };
    expect(health.queue).toMatchObject({ backend: "redis", workers: 2 });
    const workerPort = workerPorts.get(workers[0]!);
    expect((await fetch(`http://127.0.0.1:${workerPort}/healthz`)).status).toBe(200);
    expect(await (await fetch(`http://127.0.0.1:${workerPort}/metrics`)).text()).toContain(
      "blueprint_queue_wait_seconds",
    );
  });

  it("a job whose job runner keeps dying is reported on its thread, and its thread is free again", async () => {
    const gate = hold(cluster, (request) => isPlanning(request) && turnOf(request) === 0);
    const delivery = randomUUID();
    expect(await cluster.deliver(intake, cluster.type(2, "/plan greet by name").event, delivery)).toBe(200);
    await cluster.waitFor("planning to ask the model", () => gate.held() === 1);
    const worker = workers.find((one) =>
      one
        .output()
        .split("\n")
        .some((line) => line.includes('"msg":"job started"') && line.includes(delivery)),
    );
    expect(worker).toBeDefined();
    // This worker may have finished plans for the tests before this one.
    const plans = (outcome: "done" | "failed") => planJobs(`http://127.0.0.1:${workerPorts.get(worker!)}`, outcome);
    const before = { done: await plans("done"), failed: await plans("failed") };
    await killRunnerUntilItGivesUp(cluster, gate, () => jobRunnerOf(worker?.pid ?? -1), 2);
    // Counted as failed in the worker's /metrics, not as done (counted once the job has ended: awaited).
    await expect
      .poll(async () => ({ done: await plans("done"), failed: await plans("failed") }))
      .toEqual({
        done: before.done,
        failed: before.failed + 1,
      });
    // The thread is free: the next command runs.
    expect(await cluster.deliver(intake, cluster.type(2, "/plan greet by name").event)).toBe(200);
    await cluster.waitFor("the plan", () =>
      cluster.github.state.botComments(2).some((c) => c.body.includes("Plan v1")),
    );
  });

  it("a worker SIGKILLed mid-build: another takes the job over and finishes it, each step committed once, nothing posted twice", async () => {
    const gate = hold(cluster, (request) => stepOf(request) === "S2");
    const { event } = cluster.type(1, "/build");
    expect(await cluster.deliver(intake, event)).toBe(200);
    await cluster.waitFor("S2 to start", () => gate.held() === 1);
    expect(cluster.github.repository.log("blueprint/issue-1")).toEqual([STEP_COMMITS[1], "initial commit"]);
    const running = workers.find((worker) => worker.output().includes("building for @maintainer"));
    expect(running).toBeDefined();
    const runner = jobRunnerOf(running?.pid ?? -1);
    expect(runner, "the worker's job runner").toBeDefined();
    // The worker process alone: its job runner, which holds the build, must not outlive it (two runners would work one
    // job).
    process.kill(running?.pid ?? -1, "SIGKILL");
    await expect.poll(() => isRunning(runner?.pid ?? -1)).toBe(false);
    gate.release();
    await cluster.waitFor("the pull request", () => cluster.github.state.pulls.length > 0);
    await cluster.waitForQuiet();
    expect(workers.find((worker) => worker !== running)?.output()).toContain("taking over a job whose worker stopped");
    expect(cluster.github.state.pulls).toHaveLength(1);
    expectBuildFinishedOnce(cluster, 1);
  });
});
