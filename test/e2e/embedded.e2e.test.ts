import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppProcess } from "./support/app-process.js";
import { buildOutlastingItsToken, expectBuildFinishedOnce, hold, isPlanning, reactionsTo, startCluster, turnOf, type Cluster } from "./support/cluster.js";
import { greeterModelReply, STEP_COMMITS, stepOf } from "./support/greeter-scenario.js";
import { environmentOf, jobRunnerOf, localWorkerOf, niceOf } from "./support/processes.js";

/** `npm start` alone, no Redis: intake in one process, jobs in the local worker it forks. */
describe("the embedded queue: one `npm start`, no other service", () => {
  const ISSUES = 6;
  const CONCURRENCY = 2;
  let cluster: Cluster;
  let app: AppProcess;

  beforeAll(async () => {
    cluster = await startCluster({ issues: ISSUES, redis: false });
    app = await cluster.startIntake({ BLUEPRINT_CONCURRENCY: String(CONCURRENCY) });
  }, 60_000);
  afterAll(async () => cluster?.stop());

  it("runs jobs in a forked local worker whose environment holds neither the App's private key nor its webhook secret", async () => {
    const worker = localWorkerOf(app.pid);
    expect(worker).toBeDefined();
    const names = environmentOf(worker?.pid ?? -1);
    expect(names).toContain("OPENAI_API_KEY");
    expect(names).not.toContain("PRIVATE_KEY");
    expect(names).not.toContain("WEBHOOK_SECRET");
    // And the app's own process does hold them (so the check above could fail).
    expect(environmentOf(app.pid)).toContain("PRIVATE_KEY");
  });

  // How fast the intake answers and how free its event loop stays under load are bench figures
  // (`npm run bench -- load`), not assertions here: a loaded machine would fail them.
  it("runs BLUEPRINT_CONCURRENCY jobs at once and shows the rest as Queued", async () => {
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let inFlight = 0;
    let most = 0;
    cluster.reply = async (request) => {
      inFlight++;
      most = Math.max(most, inFlight);
      if (isPlanning(request) && turnOf(request) === 0) await released;
      inFlight--;
      return greeterModelReply(request);
    };
    for (let issue = 1; issue <= ISSUES; issue++) {
      expect(await cluster.deliver(app, cluster.type(issue, "/plan greet by name").event)).toBe(200);
    }
    await cluster.waitFor(`${ISSUES - CONCURRENCY} Queued notices`, () => cluster.github.state.comments.filter((c) => c.body.startsWith("Queued: Blueprint is running as many jobs as it may at once")).length === ISSUES - CONCURRENCY);
    // The first CONCURRENCY jobs reach the model (and wait there); the Queued ones do not start meanwhile.
    await cluster.waitFor(`${CONCURRENCY} jobs at the model`, () => inFlight === CONCURRENCY, 60_000);
    expect(most).toBe(CONCURRENCY);
    release();
    await cluster.waitFor("every plan", () => Array.from({ length: ISSUES }, (_, i) => i + 1).every((issue) => cluster.github.state.botComments(issue).some((c) => c.body.includes("Plan v1"))), 60_000);
    await cluster.waitForQuiet();
    expect(most).toBe(CONCURRENCY);
  }, 120_000);
});

/** The local worker keeps triage; lane work runs in a job runner it forks, at a lower CPU priority. */
describe("the embedded queue's job runner", () => {
  let cluster: Cluster;
  let app: AppProcess;
  const worker = () => localWorkerOf(app.pid);
  const runner = () => jobRunnerOf(worker()?.pid ?? -1);

  beforeAll(async () => {
    cluster = await startCluster({ issues: 2, redis: false });
    app = await cluster.startIntake();
  }, 60_000);
  afterAll(async () => cluster?.stop());

  it("is reported ready by /healthz once it has started", async () => {
    const ready = async () => ((await (await fetch(`${app.url}/healthz`)).json()) as { queue: { ready: boolean; workers: number } }).queue;
    await expect.poll(ready, { timeout: 20_000 }).toMatchObject({ ready: true, workers: 1 });
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
    await cluster.waitFor("the plan", () => cluster.github.state.botComments(1).some((c) => c.body.includes("Plan v1")));
    await cluster.waitForQuiet();

    const gate = hold(cluster, (request) => stepOf(request) === "S2");
    expect(await cluster.deliver(app, cluster.type(1, "/build").event)).toBe(200);
    await cluster.waitFor("S2 to start", () => gate.held() === 1, 45_000);
    expect(cluster.github.repository.log("blueprint/issue-1")).toEqual([STEP_COMMITS[1], "initial commit"]);
    const killed = runner();
    expect(killed).toBeDefined();
    process.kill(killed?.pid ?? -1, "SIGKILL");
    await cluster.waitFor("a fresh job runner", () => (runner()?.pid ?? killed?.pid) !== killed?.pid);
    gate.release();
    await cluster.waitFor("the pull request", () => cluster.github.state.pulls.length > 0, 60_000);
    await cluster.waitForQuiet();
    expect(app.output()).toContain("the job runner stopped; starting another to take its jobs over");
    expectBuildFinishedOnce(cluster, 1);
    // The runner's model tokens and step durations reach the intake's /metrics through the local worker.
    const metrics = await (await fetch(`${app.url}/metrics`)).text();
    expect(metrics).toMatch(/blueprint_model_tokens_total\{[^}]*kind="plan"[^}]*type="prompt"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/blueprint_model_tokens_total\{[^}]*kind="build"[^}]*type="completion"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/blueprint_step_duration_seconds_count [1-9]/);
  }, 150_000);

  it("a local worker SIGKILLed mid-build: the intake hands the job to a fresh worker, which resumes it without a second 👀", async () => {
    cluster.reply = async (request) => greeterModelReply(request);
    expect(await cluster.deliver(app, cluster.type(2, "/plan greet by name").event)).toBe(200);
    await cluster.waitFor("the plan", () => cluster.github.state.botComments(2).some((c) => c.body.includes("Plan v1")));
    await cluster.waitForQuiet();

    const gate = hold(cluster, (request) => stepOf(request) === "S2");
    const { comment, event } = cluster.type(2, "/build");
    expect(await cluster.deliver(app, event)).toBe(200);
    await cluster.waitFor("S2 to start", () => gate.held() === 1, 45_000);
    const killed = worker();
    expect(killed).toBeDefined();
    process.kill(killed?.pid ?? -1, "SIGKILL");
    await cluster.waitFor("a fresh local worker", () => (worker()?.pid ?? killed?.pid) !== killed?.pid);
    gate.release();
    await cluster.waitFor("the pull request", () => cluster.github.state.pulls.some((pull) => pull.head === "blueprint/issue-2"), 60_000);
    await cluster.waitForQuiet();
    expect(app.output()).toContain("the local worker stopped; starting another to take its jobs over");
    expectBuildFinishedOnce(cluster, 2);
    expect(cluster.github.state.botComments(2).some((c) => c.body.includes("shut down"))).toBe(false);
    expect(reactionsTo(cluster, comment.id)).toBe(1);
  }, 150_000);
});

describe("the embedded queue's job tokens", () => {
  let cluster: Cluster;
  let app: AppProcess;

  beforeAll(async () => {
    cluster = await startCluster({ issues: 2, redis: false });
    app = await cluster.startIntake();
  }, 60_000);
  afterAll(async () => cluster?.stop());

  it("a job whose token expires before its work could finish gets a fresh one from the intake, and never uses the old one after it expired", async () => {
    const minted = () => cluster.github.requests.filter((request) => request.method === "POST" && /^\/app\/installations\/\d+\/access_tokens$/.test(request.path)).length;
    // The job's own token lives three seconds; the next one an hour.
    cluster.github.queueTokenLifetimes([3_000]);
    cluster.reply = async (request) => greeterModelReply(request);
    const { comment, event } = cluster.type(1, "/plan greet by name");
    expect(await cluster.deliver(app, event)).toBe(200);
    await cluster.waitFor("the plan", () => cluster.github.state.botComments(1).some((c) => c.body.includes("Plan v1")), 45_000);
    await cluster.waitForQuiet();
    expect(app.output()).toContain("the intake sent a fresh one");
    expect(minted()).toBe(2);
    expect(cluster.github.requests.filter((request) => request.auth === "refused")).toEqual([]);
    expect(reactionsTo(cluster, comment.id)).toBe(1);
  }, 90_000);

  it("a build that outlasts its token gets a fresh one while it works: every step pushed, no call refused", async () => {
    cluster.reply = async (request) => greeterModelReply(request);
    expect(await cluster.deliver(app, cluster.type(2, "/plan greet by name").event)).toBe(200);
    await cluster.waitFor("the plan", () => cluster.github.state.botComments(2).some((c) => c.body.includes("Plan v1")), 45_000);
    await cluster.waitForQuiet();

    const minted = await buildOutlastingItsToken(cluster, app, 2);
    expectBuildFinishedOnce(cluster, 2);
    // The build's token, then its renewal: asked of the intake by the job runner, through the local worker.
    expect(minted).toBe(2);
    // Renewed while it ran (not as it started: that is the test above).
    expect(app.output()).toContain("a running job's token was about to expire: its job runner has a fresh one");
  }, 120_000);
});

/**
 * The App's key as a file in a system directory the sandbox shows (PRIVATE_KEY_PATH under /etc): the
 * job runner, which runs the agent's commands, is told where the key is (never the key), so its
 * sandbox hides it — the local worker and runner hold neither the key nor the webhook secret.
 */
describe("the App's key in a file under /etc", () => {
  let cluster: Cluster;
  let app: AppProcess;
  let keyDir: string;
  let key: string;

  beforeAll(async () => {
    cluster = await startCluster({ issues: 1, redis: false });
    keyDir = mkdtempSync("/etc/blueprint-e2e-key-");
    key = path.join(keyDir, "app.pem");
    writeFileSync(key, cluster.github.privateKey ?? "", { mode: 0o600 });
    app = await cluster.startIntake({ PRIVATE_KEY: "", PRIVATE_KEY_PATH: key });
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
    if (keyDir) rmSync(keyDir, { recursive: true, force: true });
  });

  it("is neither readable nor listed by a build's commands, while the job runner knows only its path", async () => {
    const worker = localWorkerOf(app.pid);
    const runner = jobRunnerOf(worker?.pid ?? -1);
    expect(environmentOf(runner?.pid ?? -1)).not.toContain("PRIVATE_KEY");
    expect(await cluster.deliver(app, cluster.type(1, "/plan greet by name").event)).toBe(200);
    await cluster.waitFor("the plan", () => cluster.github.state.botComments(1).some((c) => c.body.includes("Plan v1")), 45_000);
    // S1's first turn tries to read the key; the step then goes on as scripted.
    cluster.reply = (request) => {
      if (stepOf(request) !== "S1") return greeterModelReply(request);
      const turn = turnOf(request);
      // The verdicts are built at run time, so the command's own text (echoed with its output) holds neither.
      const probe = `if [ -r ${key} ]; then echo "KEY-$(echo READABLE)"; else echo "key-$(echo hidden)"; fi; echo "entries: $(ls -A ${keyDir} 2>/dev/null | wc -l)"; echo read-attempt-done`;
      if (turn === 0) return { toolCalls: [{ name: "run_command", arguments: { command: probe, timeout_s: null } }] };
      return greeterModelReply({ ...request, messages: request.messages.slice(0, -2) });
    };
    expect(await cluster.deliver(app, cluster.type(1, "/build").event)).toBe(200);
    await cluster.waitFor("the pull request", () => cluster.github.state.pulls.length > 0, 60_000);
    const answer = cluster.model.requests
      .flatMap((request) => request.messages)
      .map((message) => String(message.content ?? ""))
      .find((content) => content.includes("read-attempt-done"));
    expect(answer, "the command's output, as the model saw it").toBeDefined();
    expect(answer).toContain("key-hidden");
    expect(answer).not.toContain("KEY-READABLE");
    expect(answer).toContain("entries: 0");
    expect(answer).not.toContain("PRIVATE KEY");
    // Where the key is, the runner may know (so its sandbox hides it); the key itself, never.
    expect(environmentOf(runner?.pid ?? -1)).toContain("PRIVATE_KEY_PATH");
  }, 150_000);
});
