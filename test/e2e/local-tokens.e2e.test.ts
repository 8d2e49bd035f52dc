import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppProcess } from "./support/app-process.js";
import {
  buildOutlastingItsToken,
  expectBuildFinishedOnce,
  reactionsTo,
  startCluster,
  type Cluster,
} from "./support/cluster.js";
import { greeterModelReply } from "./support/greeter-scenario.js";

describe("the local queue's job tokens", () => {
  let cluster: Cluster;
  let app: AppProcess;

  beforeAll(async () => {
    cluster = await startCluster({ issues: 2, redis: false });
    app = await cluster.startIntake();
  });
  afterAll(async () => cluster?.stop());

  it("a job whose token expires before its work could finish gets a fresh one from the intake, and never uses the old one after it expired", async () => {
    const minted = () =>
      cluster.github.requests.filter(
        (request) => request.method === "POST" && /^\/app\/installations\/\d+\/access_tokens$/.test(request.path),
      ).length;
    // The job's own token lives three seconds; the next one an hour.
    cluster.github.queueTokenLifetimes([3_000]);
    cluster.reply = async (request) => greeterModelReply(request);
    const { comment, event } = cluster.type(1, "/plan greet by name");
    expect(await cluster.deliver(app, event)).toBe(200);
    await cluster.waitFor("the plan", () =>
      cluster.github.state.botComments(1).some((c) => c.body.includes("Plan v1")),
    );
    await cluster.waitForQuiet();
    expect(app.output()).toContain("the intake sent a fresh one");
    expect(minted()).toBe(2);
    expect(cluster.github.requests.filter((request) => request.auth === "refused")).toEqual([]);
    expect(reactionsTo(cluster, comment.id)).toBe(1);
  });

  it("a build that outlasts its token gets a fresh one while it works: every step pushed, no call refused", async () => {
    cluster.reply = async (request) => greeterModelReply(request);
    expect(await cluster.deliver(app, cluster.type(2, "/plan greet by name").event)).toBe(200);
    await cluster.waitFor("the plan", () =>
      cluster.github.state.botComments(2).some((c) => c.body.includes("Plan v1")),
    );
    await cluster.waitForQuiet();

    const minted = await buildOutlastingItsToken(cluster, app, 2);
    expectBuildFinishedOnce(cluster, 2);
    // The build's token, then its renewal: asked of the intake by the job runner, through the local worker.
    expect(minted).toBe(2);
    // Renewed while it ran (not as it started: that is the test above).
    expect(app.output()).toContain("a running job's token was about to expire: its job runner has a fresh one");
  });
});
