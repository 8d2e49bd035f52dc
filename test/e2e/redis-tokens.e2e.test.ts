import { expect, it } from "vitest";
import { buildOutlastingItsToken, clusterPerTest, queueHealth } from "./support/cluster.js";
import { STEP_COMMITS } from "./support/greeter-scenario.js";

/** One redis-server for the file; each test's cluster flushes it when it stops. */
const clusters = clusterPerTest();

/**
 * A job's token outliving its wait and its work, with real `redis-server`, a
 * real intake (`npm start`, BLUEPRINT_WORKERS=0) and real `npm run worker` processes.
 */

it("a job that waited longer than its installation token lives gets a fresh token from the intake, and runs", async () => {
  const c = await clusters.start(1);
  const intake = await c.startIntake({ BLUEPRINT_WORKERS: "0" });
  const minted = () =>
    c.github.requests.filter(
      (request) => request.method === "POST" && /^\/app\/installations\/\d+\/access_tokens$/.test(request.path),
    ).length;

  // 1. The job's token lives two seconds, and no worker runs for longer than that.
  c.github.setTokenLifetime(2_000);
  const { comment, event } = c.type(1, "/plan greet by name");
  expect(await c.deliver(intake, event)).toBe(200);
  await c.waitFor("the job's token", () => minted() === 1);
  c.github.setTokenLifetime(3600_000);
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  expect(await queueHealth(intake)).toMatchObject({ waiting: 1, workers: 0 });

  // 2. A worker takes the job: it asks the intake for a fresh token before it touches GitHub.
  const worker = await c.startWorker();
  await c.waitFor("the plan", () => c.github.state.botComments(1).some((posted) => posted.body.includes("Plan v1")));
  await c.waitForQuiet();
  expect(worker.output()).toContain("an intake sent a fresh one");
  expect(minted()).toBe(2);
  // Every call with the job's token was accepted: the expired one was never used.
  expect(c.github.requests.filter((request) => request.auth === "refused")).toEqual([]);
  expect(
    c.github.requests.some(
      (request) => request.method === "POST" && request.path.includes(`/comments/${comment.id}/reactions`),
    ),
  ).toBe(true);
  expect(worker.environment()).not.toHaveProperty("PRIVATE_KEY");
});

it("a build that outlasts its token gets a fresh one from the intake while it works: every step pushed, no call refused", async () => {
  const c = await clusters.start(1);
  const intake = await c.startIntake({ BLUEPRINT_WORKERS: "0" });
  const worker = await c.startWorker();
  expect(await c.deliver(intake, c.type(1, "/plan greet by name").event)).toBe(200);
  await c.waitFor("the plan", () => c.github.state.botComments(1).some((comment) => comment.body.includes("Plan v1")));
  await c.waitForQuiet();

  const minted = await buildOutlastingItsToken(c, intake, 1);
  expect(c.github.repository.log("blueprint/issue-1")).toEqual([...STEP_COMMITS, "initial commit"]);
  expect(minted).toBe(2);
  expect(worker.output()).toContain("the running job's token was about to expire: an intake sent a fresh one");
  const plan = c.github.state.botComments(1).find((comment) => comment.body.includes("Plan v1"));
  expect(plan?.body).toContain("- [x] **S2**");
});
