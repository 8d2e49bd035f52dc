import { afterAll, beforeAll, expect, it } from "vitest";
import type { AppProcess } from "./support/app-process.js";
import { hold, isPlanning, killRunnerUntilItGivesUp, startCluster, turnOf, type Cluster } from "./support/cluster.js";
import { jobRunnerOf, localWorkerOf } from "./support/processes.js";

/**
 * `npm start` alone (local queue): a job runner SIGKILLed while it plans. The local worker starts
 * a fresh runner, which runs the same job (same delivery) from the start; the thread must end with
 * one comment for the command, the plan, and no status comment stuck at "Planning…".
 */

let cluster: Cluster;
let app: AppProcess;
const worker = () => localWorkerOf(app.pid);
const runner = () => jobRunnerOf(worker()?.pid ?? -1);

beforeAll(async () => {
  cluster = await startCluster({ issues: 2, redis: false });
  app = await cluster.startIntake();
});
afterAll(async () => cluster?.stop());

it("a job runner SIGKILLed mid-planning: the fresh one carries on in the same status comment, which becomes the plan", async () => {
  const gate = hold(cluster, (request) => isPlanning(request) && turnOf(request) === 0);
  expect(await cluster.deliver(app, cluster.type(1, "/plan greet by name").event)).toBe(200);
  await cluster.waitFor("planning to ask the model", () => gate.held() === 1);
  const [status] = cluster.github.state.botComments(1);
  expect(status?.body).toContain("## ⏳ Planning…");

  const killed = runner();
  expect(killed).toBeDefined();
  process.kill(killed?.pid ?? -1, "SIGKILL");
  await cluster.waitFor("a fresh job runner", () => (runner()?.pid ?? killed?.pid) !== killed?.pid);
  // The fresh runner starts the job over: its own first request to the model is held too.
  await cluster.waitFor("the job to start over", () => gate.held() === 2);
  gate.release();
  await cluster.waitFor("the plan", () =>
    cluster.github.state.botComments(1).some((comment) => comment.body.includes("Plan v1")),
  );
  await cluster.waitForQuiet();

  expect(app.output()).toContain("the job runner stopped; starting another to take its jobs over");
  const bot = cluster.github.state.botComments(1);
  expect(bot.map((comment) => comment.id)).toEqual([status?.id]);
  expect(bot.filter((comment) => comment.body.includes("Plan v1"))).toHaveLength(1);
  expect(bot.some((comment) => comment.body.includes("⏳ Planning"))).toBe(false);
  expect(bot.some((comment) => comment.body.includes("❌"))).toBe(false);
});

it("a job whose job runner keeps dying is reported on its thread and counted as failed, and the thread is free again", async () => {
  const gate = hold(cluster, (request) => isPlanning(request) && turnOf(request) === 0);
  expect(await cluster.deliver(app, cluster.type(2, "/plan greet by name").event)).toBe(200);
  await killRunnerUntilItGivesUp(cluster, gate, runner, 2);
  // The intake's /metrics (with its local worker's): failed, not done (counted once the job has ended: awaited).
  await expect
    .poll(async () => (await fetch(`${app.url}/metrics`)).text())
    .toMatch(/blueprint_jobs_total\{kind="plan",outcome="failed"\} 1\b/);
  // The thread is free: the next command runs.
  expect(await cluster.deliver(app, cluster.type(2, "/plan greet by name").event)).toBe(200);
  await cluster.waitFor("the plan", () =>
    cluster.github.state.botComments(2).some((comment) => comment.body.includes("Plan v1")),
  );
});
