import { expect, it } from "vitest";
import { clusterPerTest, hold, isPlanning, queueHealth, turnOf } from "./support/cluster.js";
import { STEP_COMMITS, stepOf } from "./support/greeter-scenario.js";

/** One redis-server for the file; each test's cluster flushes it when it stops. */
const clusters = clusterPerTest();

/**
 * A worker's graceful shutdown and a job's token outliving its wait, with real `redis-server`, a
 * real intake (`npm start`, BLUEPRINT_WORKERS=0) and real `npm run worker` processes.
 */

it("SIGTERM mid-build hands the job back: it waits for the next worker, which resumes it from what was pushed", async () => {
  const c = await clusters.start(1);
  const intake = await c.startIntake({ BLUEPRINT_WORKERS: "0" });
  const first = await c.startWorker();
  expect(await c.deliver(intake, c.type(1, "/plan greet by name").event)).toBe(200);
  await c.waitFor("the plan", () => c.github.state.botComments(1).some((comment) => comment.body.includes("Plan v1")));

  const gate = hold(c, (request) => stepOf(request) === "S2");
  expect(await c.deliver(intake, c.type(1, "/build").event)).toBe(200);
  await c.waitFor("S2 to start", () => gate.held() === 1);
  expect(c.github.repository.log("blueprint/issue-1")).toEqual([STEP_COMMITS[1], "initial commit"]);

  // 1. The only worker is told to stop: it stops S2 at its safe point and puts the job back.
  await first.stop();
  expect(first.output()).toContain("job handed back to the queue at a safe point");
  expect(first.output()).not.toContain("did not stop");
  gate.release();
  // 2. No worker left: the job waits in the queue, and the thread says it is paused, not failed.
  expect(await queueHealth(intake)).toMatchObject({ waiting: 1, running: 0, workers: 0 });
  const paused = c.github.state.botComments(1).find((comment) => comment.body.includes("Plan v1"));
  expect(paused?.body).toContain("Paused at a safe point");
  expect(paused?.body).toContain("- [x] **S1**");
  expect(paused?.body).toContain("- [ ] **S2**");

  // 3. The next worker to start resumes it: S1 is not built again, S2 is built once.
  const next = await c.startWorker();
  await c.waitFor("the pull request", () => c.github.state.pulls.length > 0);
  await c.waitForQuiet();
  expect(next.output()).toContain("taking over a job whose worker stopped");
  expect(c.github.repository.log("blueprint/issue-1")).toEqual([...STEP_COMMITS, "initial commit"]);
  expect(c.github.state.pulls).toHaveLength(1);
  const bot = c.github.state.botComments(1);
  expect(bot.filter((comment) => comment.body.includes("Plan v1"))).toHaveLength(1);
  // Nothing asks anyone to comment `/build` again, nothing failed, nothing was said twice.
  expect(bot.some((comment) => comment.body.includes("❌") || comment.body.includes("again"))).toBe(false);
  const bodies = bot.map((comment) => comment.body);
  expect(new Set(bodies).size).toBe(bodies.length);
  const plan = bot.find((comment) => comment.body.includes("Plan v1"));
  expect(plan?.body).toContain("- [x] **S2**");
  expect(plan?.body).not.toContain("Paused at a safe point");
});

it("SIGTERM mid-plan hands the job to another running worker, which plans from the start: one plan, no failure", async () => {
  const c = await clusters.start(1);
  const intake = await c.startIntake({ BLUEPRINT_WORKERS: "0" });
  const first = await c.startWorker();
  const gate = hold(c, (request) => isPlanning(request) && turnOf(request) === 1);
  expect(await c.deliver(intake, c.type(1, "/plan greet by name").event)).toBe(200);
  await c.waitFor("planning to be under way", () => gate.held() === 1);
  // Another worker is up before the first one stops: it takes the job as soon as it is handed back.
  const second = await c.startWorker();
  await first.stop();
  expect(first.output()).toContain("job handed back to the queue at a safe point");
  gate.release();
  await c.waitFor("the plan", () => c.github.state.botComments(1).some((comment) => comment.body.includes("Plan v1")));
  await c.waitForQuiet();
  expect(second.output()).toContain("taking over a job whose worker stopped");
  const bot = c.github.state.botComments(1);
  expect(bot.filter((comment) => comment.body.includes("Plan v1"))).toHaveLength(1);
  expect(bot.some((comment) => comment.body.includes("❌") || comment.body.includes("again"))).toBe(false);
  // The first run's status comment says where the plan went, and holds no state that could count.
  const note = bot.find((comment) => comment.body.startsWith("⏸ Blueprint restarted while planning"));
  expect(note).toBeDefined();
  expect(note?.body).not.toContain("<!-- blueprint:state");
});
