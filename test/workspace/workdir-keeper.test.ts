import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readDiskUse, sizeOnDisk } from "../../src/shared/disk-usage.js";
import { RepoCache } from "../../src/workspace/repo-cache.js";
import { WorkdirKeeper, type RepositoryOwner } from "../../src/workspace/workdir-keeper.js";
import type { Workspace } from "../../src/workspace/workspace.js";
import { createBareRepo, tempDir, type BareRepo } from "../helpers/git-repo.js";

interface Repo {
  bare: BareRepo;
  owner: RepositoryOwner;
}

function repository(installationId: number, owner: string, name: string, files: Record<string, string> = { "README.md": `# ${name}\n` }): Repo {
  const bare = createBareRepo(files);
  return { bare, owner: { installationId, owner, name, cloneUrl: bare.url } };
}

/** One job on a repository as a use case runs it: a worktree checked out, a repo_map cache written, the tree handed back. */
async function job(keeper: WorkdirKeeper, cache: RepoCache, repo: Repo, during?: (tree: Workspace) => Promise<void>): Promise<string> {
  return keeper.use(repo.owner, async () => {
    const tree = await cache.prepare({ cloneUrl: repo.bare.url, ref: "refs/heads/main" });
    mkdirSync(tree.tagCacheDir, { recursive: true });
    writeFileSync(path.join(tree.tagCacheDir, "tags.json"), "{}");
    await during?.(tree);
    await tree.dispose();
    return tree.dir;
  });
}

/** Everything of a repository's in the work directory: its mirror, its repo_map cache, its worktrees. */
async function filesOf(cache: RepoCache, repo: Repo): Promise<string[]> {
  return (await cache.repositoryFiles(cache.mirrorPath(repo.bare.url))).filter((file) => existsSync(file));
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

describe("WorkdirKeeper: uninstalls", () => {
  it("removes only the removed repository's mirror, repo_map cache and worktrees, then a whole installation's", async () => {
    const cache = new RepoCache(tempDir("blueprint-keeper-"));
    const keeper = new WorkdirKeeper(cache);
    const removed = repository(1, "octo-org", "Hello-World");
    const kept = repository(1, "octo-org", "kept");
    const other = repository(2, "someone", "theirs");
    for (const repo of [removed, kept, other]) await job(keeper, cache, repo);
    const before = await filesOf(cache, removed);
    expect(before).toHaveLength(3); // mirror, repo_map cache, the pooled worktree

    // GitHub's names are case-insensitive; the payload may spell them otherwise than the clone URL.
    const result = await keeper.remove({ installationId: 1, repositories: [{ owner: "Octo-Org", name: "hello-world" }] });
    expect(result).toEqual({ removed: [cache.mirrorPath(removed.bare.url)], deferred: [] });
    for (const file of before) expect(existsSync(file)).toBe(false);
    expect(await filesOf(cache, kept)).toHaveLength(3);
    expect(await filesOf(cache, other)).toHaveLength(3);

    // The same names under another installation are not that installation's.
    expect((await keeper.remove({ installationId: 2, repositories: [{ owner: "octo-org", name: "kept" }] })).removed).toEqual([]);
    await keeper.remove({ installationId: 2, repositories: null });
    expect(await filesOf(cache, other)).toEqual([]);
    expect(await filesOf(cache, kept)).toHaveLength(3);
    expect(readdirSync(path.join(cache.workdir, "jobs"))).toHaveLength(1);

    // A later job on a removed repository clones it afresh.
    await job(keeper, cache, removed);
    expect(await filesOf(cache, removed)).toHaveLength(3);
  });

  it("keeps a running job's tree until the job ends, then removes it", async () => {
    const cache = new RepoCache(tempDir("blueprint-keeper-"));
    const keeper = new WorkdirKeeper(cache);
    const repo = repository(7, "octo-org", "busy");
    const started = deferred();
    const finish = deferred();
    let treeDir = "";
    const running = job(keeper, cache, repo, async (tree) => {
      treeDir = tree.dir;
      started.resolve();
      await finish.promise;
    });
    await job(keeper, cache, repository(7, "octo-org", "busy-too")); // its owner record written: it is the installation's
    await started.promise;

    const result = await keeper.remove({ installationId: 7, repositories: null });
    expect(result.deferred).toEqual([cache.mirrorPath(repo.bare.url)]);
    expect(result.removed).toHaveLength(1);
    // The running job still has its worktree and its mirror.
    expect(existsSync(path.join(treeDir, "README.md"))).toBe(true);
    expect(existsSync(cache.mirrorPath(repo.bare.url))).toBe(true);

    finish.resolve();
    await running;
    expect(await filesOf(cache, repo)).toEqual([]);
    expect(existsSync(treeDir)).toBe(false);
  });
});

describe("WorkdirKeeper: BLUEPRINT_WORKDIR_MAX_GB", () => {
  it("evicts the least recently used repositories first, only as many as the bound needs", async () => {
    const workdir = tempDir("blueprint-keeper-");
    const cache = new RepoCache(workdir);
    const unbounded = new WorkdirKeeper(cache);
    const [a, b, c] = ["a", "b", "c"].map((name) => repository(1, "octo-org", name, { "data.txt": `${name}\n`.repeat(20_000) })) as [Repo, Repo, Repo];
    // Used in the order a, b, c, then a again: least recently used first is b, then c.
    for (const repo of [a, b, c, a]) await job(unbounded, cache, repo);
    const size = async (repo: Repo) => {
      let bytes = 0;
      for (const file of await filesOf(cache, repo)) bytes += await sizeOnDisk(file);
      return bytes;
    };
    const [sa, sc] = [await size(a), await size(c)];

    const evicted = await new WorkdirKeeper(new RepoCache(workdir), { maxBytes: sa + sc + 1024 }).enforceLimit();
    expect(evicted).toEqual([cache.mirrorPath(b.bare.url)]);
    expect(await filesOf(cache, b)).toEqual([]);
    expect(await filesOf(cache, c)).toHaveLength(3);

    const again = await new WorkdirKeeper(new RepoCache(workdir), { maxBytes: sa + 1024 }).enforceLimit();
    expect(again).toEqual([cache.mirrorPath(c.bare.url)]);
    expect(await filesOf(cache, a)).toHaveLength(3);
    const recorded = await readDiskUse(workdir, sa + 1024);
    expect(recorded.workdirBytes).toBe(sa);
    expect(recorded.limitBytes).toBe(sa + 1024);
  });

  it("holds the bound after each job, never evicting a repository a running job uses", async () => {
    const cache = new RepoCache(tempDir("blueprint-keeper-"));
    const keeper = new WorkdirKeeper(cache, { maxBytes: 1 });
    const busy = repository(1, "octo-org", "busy");
    const quick = repository(1, "octo-org", "quick");
    const finish = deferred();
    const started = deferred();
    const running = job(keeper, cache, busy, async () => {
      started.resolve();
      await finish.promise;
    });
    await started.promise;
    // The quick job ends over the bound: its own repository goes, the busy one stays.
    await job(keeper, cache, quick);
    expect(await filesOf(cache, quick)).toEqual([]);
    expect(existsSync(cache.mirrorPath(busy.bare.url))).toBe(true);

    finish.resolve();
    await running;
    expect(await filesOf(cache, busy)).toEqual([]);
    expect((await readDiskUse(cache.workdir, 1)).workdirBytes).toBe(0);
  });

  it("at start removes worktrees an earlier process left and checks the bound", async () => {
    const workdir = tempDir("blueprint-keeper-");
    const earlier = new RepoCache(workdir);
    const repo = repository(1, "octo-org", "left");
    const crashed = await earlier.prepare({ cloneUrl: repo.bare.url, ref: "refs/heads/main" }); // never handed back
    const keeper = new WorkdirKeeper(new RepoCache(workdir));
    expect(await keeper.start()).toEqual([]);
    expect(existsSync(crashed.dir)).toBe(false);
    expect(existsSync(earlier.mirrorPath(repo.bare.url))).toBe(true);
    const use = await readDiskUse(workdir, null);
    expect(use.workdirBytes).toBe(await sizeOnDisk(earlier.mirrorPath(repo.bare.url)));
    expect(use.freeBytes).toBeGreaterThan(0);
  });
});

describe("WorkdirKeeper: a first start", () => {
  it("starts on a work directory that does not exist yet, quietly, and records it empty", async () => {
    const workdir = path.join(tempDir("blueprint-keeper-"), "not-yet");
    const warnings: string[] = [];
    const keeper = new WorkdirKeeper(new RepoCache(workdir), { maxBytes: 1, log: { info: () => undefined, warn: (_fields, message = "") => void warnings.push(message) } });
    expect(await keeper.start()).toEqual([]);
    expect(warnings).toEqual([]);
    expect((await readDiskUse(workdir, 1)).workdirBytes).toBe(0);
  });
});

describe("WorkdirKeeper: one keeper per directory", () => {
  it("neither evicts nor sweeps a directory another live process keeps, and says so", async () => {
    const workdir = tempDir("blueprint-keeper-");
    const cache = new RepoCache(workdir);
    const repo = repository(1, "octo-org", "shared");
    const theirs = await cache.prepare({ cloneUrl: repo.bare.url, ref: "refs/heads/main" }); // another process's running job
    writeFileSync(path.join(workdir, "keeper.pid"), String(process.ppid)); // that process: alive, not this one
    const warnings: string[] = [];
    const keeper = new WorkdirKeeper(new RepoCache(workdir), { maxBytes: 1, log: { info: () => undefined, warn: (_fields, message = "") => void warnings.push(message) } });

    expect(await keeper.start()).toEqual([]);
    expect(existsSync(path.join(theirs.dir, "README.md"))).toBe(true);
    expect(existsSync(cache.mirrorPath(repo.bare.url))).toBe(true);
    expect(warnings).toEqual([expect.stringContaining("another process keeps this work directory")]);
  });
});

describe("sizeOnDisk", () => {
  it("counts what du counts: allocated blocks, a hard-linked file once, links not followed", async () => {
    const dir = tempDir("blueprint-du-");
    writeFileSync(path.join(dir, "a.bin"), Buffer.alloc(100_000, 1));
    mkdirSync(path.join(dir, "sub"));
    writeFileSync(path.join(dir, "sub", "b.txt"), "b\n");
    execFileSync("ln", [path.join(dir, "a.bin"), path.join(dir, "sub", "hard.bin")]);
    execFileSync("ln", ["-s", "/usr", path.join(dir, "usr-link")]);
    const du = Number(execFileSync("du", ["-s", "-B1", dir], { encoding: "utf8" }).split("\t")[0]);
    expect(await sizeOnDisk(dir)).toBe(du);
    expect(await sizeOnDisk(path.join(dir, "missing"))).toBe(0);
  });
});
