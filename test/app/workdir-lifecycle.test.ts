import { existsSync, readdirSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { RepoCache } from "../../src/workspace/repo-cache.js";
import { WorkdirKeeper } from "../../src/workspace/workdir-keeper.js";
import { samplePlan, type ScriptedReply } from "../helpers/model-server.js";
import { commentPayload, webhookExample, type TestApp } from "../helpers/app.js";
import { useAppFixture } from "../helpers/app-fixture.js";
import { createBareRepo } from "../helpers/git-repo.js";
import { INSTALLATION_ID } from "../helpers/github-double.js";
import { PATIENCE_MS } from "../helpers/patience.js";

/** Issue #30 point 4, through the real Probot app: uninstalls clean the work directory, /healthz reports it. */

const fx = useAppFixture({ files: { "README.md": "# Hello\n" } });
const submit: ScriptedReply = { toolCalls: [{ name: "submit_plan", arguments: samplePlan() }] };

/** Another installation's repository, with files in the app's work directory as its jobs would leave them. */
async function anotherInstallationsRepository(app: TestApp): Promise<string> {
  await app.blueprint.idle(); // the app's tidying at start is done: what follows is not a leftover
  const theirs = createBareRepo({ "README.md": "# Theirs\n" });
  const cache = new RepoCache(app.workdir);
  const owner = { installationId: INSTALLATION_ID + 1, owner: "someone", name: "theirs", cloneUrl: theirs.url };
  await new WorkdirKeeper(cache).use(owner, async () =>
    (await cache.prepare({ cloneUrl: theirs.url, ref: "refs/heads/main" })).dispose(),
  );
  return cache.mirrorPath(theirs.url);
}

const comment = (app: TestApp, id: string, body: string) =>
  app.probot.receive({
    id,
    name: "issue_comment",
    payload: commentPayload({ body, cloneUrl: fx.repo.url }),
  } as Parameters<typeof app.probot.receive>[0]);

describe("a repository removed from the App", () => {
  it("installation_repositories.removed stops the running job, drops the one waiting, and removes the repository's files once the job ended; another installation's stay", async () => {
    let firstArrived: () => void = () => undefined;
    const busy = new Promise<void>((resolve) => (firstArrived = resolve));
    const app = await fx.start([
      () => {
        firstArrived();
        return { hang: true };
      },
      submit,
    ]);
    const theirs = await anotherInstallationsRepository(app);
    const ours = new RepoCache(app.workdir).mirrorPath(fx.repo.url);

    await comment(app, "c-1", "/plan first");
    await busy;
    await comment(app, "c-2", "/plan second");
    await vi.waitFor(() => expect(fx.github.botComments().some((c) => c.body.startsWith("Queued:"))).toBe(true), {
      timeout: PATIENCE_MS,
    });
    expect(existsSync(ours)).toBe(true);

    const removed = webhookExample("installation_repositories", (example) => example.action === "removed");
    removed.installation.id = INSTALLATION_ID;
    removed.repositories_removed = [
      { ...removed.repositories_removed[0], name: "Hello-World", full_name: "Codertocat/Hello-World" },
    ];
    await app.deliver("installation_repositories", removed);

    expect(fx.model.requests).toHaveLength(1); // the waiting /plan never ran
    expect(existsSync(ours)).toBe(false);
    expect(readdirSync(path.join(app.workdir, "jobs")).map((dir) => path.join(app.workdir, "jobs", dir))).toEqual(
      (await new RepoCache(app.workdir).repositoryFiles(theirs)).slice(2),
    );
    expect(existsSync(theirs)).toBe(true);
  });

  it("installation.deleted removes every repository of the installation, without asking GitHub", async () => {
    const app = await fx.start([submit]);
    const theirs = await anotherInstallationsRepository(app);
    await app.deliver("issue_comment", commentPayload({ body: "/plan", cloneUrl: fx.repo.url }));
    const ours = new RepoCache(app.workdir).mirrorPath(fx.repo.url);
    expect(existsSync(ours)).toBe(true);
    const requests = fx.github.requests.length;

    const deleted = webhookExample("installation", (example) => example.action === "deleted");
    deleted.installation.id = INSTALLATION_ID;
    await app.deliver("installation", deleted);

    expect(existsSync(ours)).toBe(false);
    expect(existsSync(theirs)).toBe(true);
    expect(fx.github.requests.length).toBe(requests);
  });
});

describe("/healthz", () => {
  it("reports the work directory's size as last measured after a job, its bound and the free space", async () => {
    const app = await fx.start([submit], { BLUEPRINT_WORKDIR_MAX_GB: "1.5" });
    await app.deliver("issue_comment", commentPayload({ body: "/plan", cloneUrl: fx.repo.url }));
    const server = http.createServer((req, res) => void Promise.all(app.handlers.map((handle) => handle(req, res))));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const health = (await (
        await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/healthz`)
      ).json()) as { disk: Record<string, unknown> };
      const cache = new RepoCache(app.workdir);
      let bytes = 0;
      const { sizeOnDisk } = await import("../../src/shared/disk-usage.js");
      for (const file of await cache.repositoryFiles(cache.mirrorPath(fx.repo.url))) bytes += await sizeOnDisk(file);
      expect(health.disk).toMatchObject({ workdirBytes: bytes, limitBytes: 1.5 * 2 ** 30 });
      expect(health.disk.freeBytes).toEqual(expect.any(Number));
      expect(Date.parse(String(health.disk.measuredAt))).not.toBeNaN();
    } finally {
      server.close();
    }
  });
});
