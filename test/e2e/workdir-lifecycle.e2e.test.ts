import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhookExample } from "../helpers/app.js";
import type { AppProcess } from "./support/app-process.js";
import { startCluster, type Cluster } from "./support/cluster.js";

/**
 * `npm start` alone: the removal goes from the intake to its local worker and on to the job runner,
 * which holds the work directory; /healthz reads what the runner measured.
 */
describe("an uninstall, through the intake, its local worker and its job runner", () => {
  let cluster: Cluster;
  let app: AppProcess;
  const workdir = mkdtempSync(path.join(os.tmpdir(), "bp-workdir-"));
  const mirrors = () => readdirSync(path.join(workdir, "mirrors")).filter((name) => name.endsWith(".git"));

  beforeAll(async () => {
    cluster = await startCluster({ issues: 1, redis: false });
    app = await cluster.startIntake({ BLUEPRINT_WORKDIR: workdir, BLUEPRINT_WORKDIR_MAX_GB: "2" });
  });
  afterAll(async () => {
    await cluster?.stop();
    rmSync(workdir, { recursive: true, force: true });
  });

  it("reports disk use at /healthz after a job, and installation_repositories.removed removes the repository's files", async () => {
    expect(await cluster.deliver(app, cluster.type(1, "/plan greet by name").event)).toBe(200);
    await cluster.waitFor("the plan", () =>
      cluster.github.state.botComments(1).some((c) => c.body.includes("Plan v1")),
    );
    await cluster.waitFor("the mirror", () => existsSync(path.join(workdir, "mirrors")) && mirrors().length === 1);
    const disk = async () =>
      (
        (await (await fetch(`${app.url}/healthz`)).json()) as {
          disk: { workdirBytes: number | null; limitBytes: number; freeBytes: number };
        }
      ).disk;
    await expect.poll(async () => (await disk()).workdirBytes).toBeGreaterThan(0);
    expect(await disk()).toMatchObject({ limitBytes: 2 * 2 ** 30, freeBytes: expect.any(Number) });

    const { owner, name } = cluster.github.repository;
    const removed = webhookExample("installation_repositories", (example) => example.action === "removed");
    removed.installation.id = cluster.github.installationId;
    removed.repositories_removed = [{ ...removed.repositories_removed[0], name, full_name: `${owner}/${name}` }];
    expect(await cluster.deliver(app, { name: "installation_repositories", payload: removed })).toBe(200);
    await cluster.waitFor(
      "the repository's files to go",
      () => mirrors().length === 0 && readdirSync(path.join(workdir, "jobs")).length === 0,
    );
    await expect.poll(async () => (await disk()).workdirBytes).toBe(0);
  });
});
