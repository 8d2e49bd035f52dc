import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppProcess } from "./support/app-process.js";
import { expectBuildFinishedOnce, hold, reactionsTo, startCluster, type Cluster } from "./support/cluster.js";
import { greeterModelReply, STEP_COMMITS, stepOf } from "./support/greeter-scenario.js";
import { environmentOf, jobRunnerOf, localWorkerOf, niceOf } from "./support/processes.js";

/** The local worker keeps triage; lane work runs in a job runner it forks, at a lower CPU priority. */
describe("the local queue's job runner", () => {
  let cluster: Cluster;
  let app: AppProcess;
  const worker = () => localWorkerOf(app.pid);
  const runner = () => jobRunnerOf(worker()?.pid ?? -1);

  beforeAll(async () => {
    cluster = await startCluster({ issues: 2, redis: false });
    app = await cluster.startIntake();
  });
  afterAll(async () => cluster?.stop());

  it("is reported ready by /healthz once it has started", async () => {
    const ready = async () =>
      ((await (await fetch(`${app.url}/healthz`)).json()) as { queue: { ready: boolean; workers: number } }).queue;
    await expect.poll(ready).toMatchObject({ ready: true, workers: 1 });
  });

  it("runs jobs below the local worker's CPU priority, and the local worker below the intake's, without the App's private key or webhook secret", () => {
    const local = worker();
    const jobs = runner();
    expect(local).toBeDefined();
    expect(jobs).toBeDefined();
    expect(niceOf(jobs?.pid ?? -1)).toBeGreaterThan(niceOf(local?.pid ?? -1));
    // Intake first: the local worker runs below the intake, its job runner lower still.
    expect(niceOf(local?.pid ?? -1)).toBeGreaterThan(niceOf(app.pid));
    const names = environmentOf(jobs?.pid ?? -1);
    expect(names).toContain("OPENAI_API_KEY");
    expect(names).not.toContain("PRIVATE_KEY");
    expect(names).not.toContain("WEBHOOK_SECRET");
  });

  it("a job runner SIGKILLed mid-build: a fresh one takes the job over, each step committed once, nothing posted twice", async () => {
    cluster.reply = async (request) => greeterModelReply(request);
    expect(await cluster.deliver(app, cluster.type(1, "/plan greet by name").event)).toBe(200);
    await cluster.waitFor("the plan", () =>
      cluster.github.state.botComments(1).some((c) => c.body.includes("Plan v1")),
    );
    await cluster.waitForQuiet();

    const gate = hold(cluster, (request) => stepOf(request) === "S2");
    expect(await cluster.deliver(app, cluster.type(1, "/build").event)).toBe(200);
    await cluster.waitFor("S2 to start", () => gate.held() === 1);
    expect(cluster.github.repository.log("blueprint/issue-1")).toEqual([STEP_COMMITS[1], "initial commit"]);
    const killed = runner();
    expect(killed).toBeDefined();
    process.kill(killed?.pid ?? -1, "SIGKILL");
    await cluster.waitFor("a fresh job runner", () => (runner()?.pid ?? killed?.pid) !== killed?.pid);
    gate.release();
    await cluster.waitFor("the pull request", () => cluster.github.state.pulls.length > 0);
    await cluster.waitForQuiet();
    expect(app.output()).toContain("the job runner stopped; starting another to take its jobs over");
    expectBuildFinishedOnce(cluster, 1);
    // The runner's model tokens and step durations reach the intake's /metrics through the local worker, in batches
    // that can arrive after the pull request: awaited.
    const metricsText = async () => (await fetch(`${app.url}/metrics`)).text();
    await expect.poll(metricsText).toMatch(/blueprint_step_duration_seconds_count [1-9]/);
    const metrics = await metricsText();
    expect(metrics).toMatch(/blueprint_model_tokens_total\{[^}]*kind="plan"[^}]*type="prompt"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/blueprint_model_tokens_total\{[^}]*kind="build"[^}]*type="completion"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/blueprint_step_duration_seconds_count [1-9]/);
  });

  it("a local worker SIGKILLed mid-build: the intake hands the job to a fresh worker, which resumes it without a second 👀", async () => {
    cluster.reply = async (request) => greeterModelReply(request);
    expect(await cluster.deliver(app, cluster.type(2, "/plan greet by name").event)).toBe(200);
    await cluster.waitFor("the plan", () =>
      cluster.github.state.botComments(2).some((c) => c.body.includes("Plan v1")),
    );
    await cluster.waitForQuiet();

    const gate = hold(cluster, (request) => stepOf(request) === "S2");
    const { comment, event } = cluster.type(2, "/build");
    expect(await cluster.deliver(app, event)).toBe(200);
    await cluster.waitFor("S2 to start", () => gate.held() === 1);
    const killed = worker();
    expect(killed).toBeDefined();
    process.kill(killed?.pid ?? -1, "SIGKILL");
    await cluster.waitFor("a fresh local worker", () => (worker()?.pid ?? killed?.pid) !== killed?.pid);
    gate.release();
    await cluster.waitFor("the pull request", () =>
      cluster.github.state.pulls.some((pull) => pull.head === "blueprint/issue-2"),
    );
    await cluster.waitForQuiet();
    expect(app.output()).toContain("the local worker stopped; starting another to take its jobs over");
    expectBuildFinishedOnce(cluster, 2);
    expect(cluster.github.state.botComments(2).some((c) => c.body.includes("shut down"))).toBe(false);
    expect(reactionsTo(cluster, comment.id)).toBe(1);
  });
});
