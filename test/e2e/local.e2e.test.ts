import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppProcess } from "./support/app-process.js";
import { isPlanning, startCluster, turnOf, type Cluster } from "./support/cluster.js";
import { greeterModelReply } from "./support/greeter-scenario.js";
import { environmentOf, localWorkerOf } from "./support/processes.js";

/** `npm start` alone, no Redis: intake in one process, jobs in the local worker it forks. */
describe("the local queue: one `npm start`, no other service", () => {
  const ISSUES = 6;
  const CONCURRENCY = 2;
  let cluster: Cluster;
  let app: AppProcess;

  beforeAll(async () => {
    cluster = await startCluster({ issues: ISSUES, redis: false });
    app = await cluster.startIntake({ BLUEPRINT_CONCURRENCY: String(CONCURRENCY) });
  });
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
    await cluster.waitFor(
      `${ISSUES - CONCURRENCY} Queued notices`,
      () =>
        cluster.github.state.comments.filter((c) =>
          c.body.startsWith("Queued: Blueprint is running as many jobs as it may at once"),
        ).length ===
        ISSUES - CONCURRENCY,
    );
    // The first CONCURRENCY jobs reach the model (and wait there); the Queued ones do not start meanwhile.
    await cluster.waitFor(`${CONCURRENCY} jobs at the model`, () => inFlight === CONCURRENCY);
    expect(most).toBe(CONCURRENCY);
    release();
    await cluster.waitFor("every plan", () =>
      Array.from({ length: ISSUES }, (_, i) => i + 1).every((issue) =>
        cluster.github.state.botComments(issue).some((c) => c.body.includes("Plan v1")),
      ),
    );
    await cluster.waitForQuiet();
    expect(most).toBe(CONCURRENCY);
  });
});
