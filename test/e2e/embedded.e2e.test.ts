import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppProcess } from "./support/app-process.js";
import { isPlanning, startCluster, turnOf, type Cluster } from "./support/cluster.js";
import { greeterModelReply } from "./support/greeter-scenario.js";

/** The processes whose parent is `pid`, with their command lines. */
function childrenOf(pid: number): Array<{ pid: number; cmdline: string }> {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        return parent === pid ? [{ pid: Number(entry), cmdline: readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ") }] : [];
      } catch {
        return [];
      }
    });
}

const environmentOf = (pid: number) => readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").map((entry) => entry.slice(0, entry.indexOf("=")));

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
    const worker = childrenOf(app.pid).find((child) => child.cmdline.includes("local-worker.js"));
    expect(worker).toBeDefined();
    const names = environmentOf(worker?.pid ?? -1);
    expect(names).toContain("OPENAI_API_KEY");
    expect(names).not.toContain("PRIVATE_KEY");
    expect(names).not.toContain("WEBHOOK_SECRET");
    // And the app's own process does hold them (so the check above could fail).
    expect(environmentOf(app.pid)).toContain("PRIVATE_KEY");
  });

  it("runs BLUEPRINT_CONCURRENCY jobs at once, shows the rest as Queued, and keeps the intake's event loop free meanwhile", async () => {
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
    await fetch(`${app.url}/healthz`); // starts a fresh event-loop measurement
    const answered: number[] = [];
    for (let issue = 1; issue <= ISSUES; issue++) {
      const started = performance.now();
      expect(await cluster.deliver(app, cluster.type(issue, "/plan greet by name").event)).toBe(200);
      answered.push(performance.now() - started);
    }
    await cluster.waitFor(`${ISSUES - CONCURRENCY} Queued notices`, () => cluster.github.state.comments.filter((c) => c.body.startsWith("Queued: Blueprint is running as many jobs as it may at once")).length === ISSUES - CONCURRENCY);
    expect(most).toBe(CONCURRENCY);
    release();
    await cluster.waitFor("every plan", () => Array.from({ length: ISSUES }, (_, i) => i + 1).every((issue) => cluster.github.state.botComments(issue).some((c) => c.body.includes("Plan v1"))), 60_000);
    const health = (await (await fetch(`${app.url}/healthz`)).json()) as { eventLoopDelayMs: { p99: number; max: number } };
    await cluster.waitForQuiet();
    expect(most).toBe(CONCURRENCY);
    // Measured inside the intake (perf_hooks.monitorEventLoopDelay) while six jobs cloned, prompted and posted.
    expect(health.eventLoopDelayMs.p99, JSON.stringify(health.eventLoopDelayMs)).toBeLessThan(50);
    expect(Math.max(...answered)).toBeLessThan(1_000);
  }, 120_000);
});
