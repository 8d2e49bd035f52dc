import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readDiskUse, sizeOnDisk } from "../../src/shared/disk-usage.js";
import { RepoCache } from "../../src/workspace/repo-cache.js";
import {
  claimWorkdir,
  currentIdentity,
  LEASE_MS,
  newIdentity,
  register,
  type ProcessIdentity,
} from "../../src/workspace/workdir-claim.js";
import { WorkdirKeeper, type RepositoryOwner } from "../../src/workspace/workdir-keeper.js";
import type { Workspace } from "../../src/workspace/workspace.js";
import { createBareRepo, tempDir, type BareRepo } from "../helpers/git-repo.js";

interface Repo {
  bare: BareRepo;
  owner: RepositoryOwner;
}

function repository(
  installationId: number,
  owner: string,
  name: string,
  files: Record<string, string> = { "README.md": `# ${name}\n` },
): Repo {
  const bare = createBareRepo(files);
  return { bare, owner: { installationId, owner, name, cloneUrl: bare.url } };
}

/**
 * One job on a repository as a use case runs it: a worktree checked out, a repo_map cache written, the tree handed
 * back.
 */
async function job(
  keeper: WorkdirKeeper,
  cache: RepoCache,
  repo: Repo,
  during?: (tree: Workspace) => Promise<void>,
): Promise<string> {
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

/** A job that runs until told to finish, returned once its worktree is checked out. */
async function runningJob(
  keeper: WorkdirKeeper,
  cache: RepoCache,
  repo: Repo,
): Promise<{ tree: string; finish: () => Promise<string> }> {
  const started = deferred();
  const finish = deferred();
  let tree = "";
  const done = job(keeper, cache, repo, async (workspace) => {
    tree = workspace.dir;
    started.resolve();
    await finish.promise;
  });
  await started.promise;
  return {
    tree,
    finish: () => {
      finish.resolve();
      return done;
    },
  };
}

/** A process that has exited: its pid is dead (and, were it reused, another start time would show it). */
function goneProcess(): ProcessIdentity {
  const pid = spawnSync(process.execPath, ["-e", ""]).pid;
  if (pid === undefined) throw new Error("could not start a process");
  return newIdentity(pid, "1");
}

/** Another live process on this machine: this one's parent, under an identity of its own. */
const liveProcess = () => newIdentity(process.ppid);

/** A process that claims the work directory, prints its id and what it found, and lives until its stdin ends. */
function claimant(workdir: string): { child: ChildProcess; answer: Promise<{ id: string; holder: string | null }> } {
  const module = fileURLToPath(new URL("../../src/workspace/workdir-claim.ts", import.meta.url));
  const script = `
    const { claimWorkdir, currentIdentity } = await import(${JSON.stringify(module)});
    const holder = await claimWorkdir(${JSON.stringify(workdir)}, currentIdentity());
    console.log(JSON.stringify({ id: currentIdentity().id, holder }));
    process.stdin.resume();
    process.stdin.on("end", () => process.exit(0));`;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: fileURLToPath(new URL("../..", import.meta.url)),
    stdio: ["pipe", "pipe", "inherit"],
  });
  const answer = (async () => {
    if (!child.stdout) throw new Error("no stdout");
    for await (const line of createInterface({ input: child.stdout }))
      return JSON.parse(line) as { id: string; holder: string | null };
    throw new Error("the claimant exited without answering");
  })();
  return { child, answer };
}

function collectWarnings(): {
  warnings: string[];
  log: { info: () => void; warn: (fields: object, message?: string) => void };
} {
  const warnings: string[] = [];
  return { warnings, log: { info: () => undefined, warn: (_fields, message = "") => void warnings.push(message) } };
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
    const result = await keeper.remove({
      installationId: 1,
      repositories: [{ owner: "Octo-Org", name: "hello-world" }],
    });
    expect(result).toEqual({ removed: [cache.mirrorPath(removed.bare.url)], deferred: [], left: [] });
    for (const file of before) expect(existsSync(file)).toBe(false);
    expect(await filesOf(cache, kept)).toHaveLength(3);
    expect(await filesOf(cache, other)).toHaveLength(3);

    // The same names under another installation are not that installation's.
    expect(
      (await keeper.remove({ installationId: 2, repositories: [{ owner: "octo-org", name: "kept" }] })).removed,
    ).toEqual([]);
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
    const { tree: treeDir, finish } = await runningJob(keeper, cache, repo);
    await job(keeper, cache, repository(7, "octo-org", "busy-too")); // its owner record written: it is the installation's

    const result = await keeper.remove({ installationId: 7, repositories: null });
    expect(result.deferred).toEqual([cache.mirrorPath(repo.bare.url)]);
    expect(result.removed).toHaveLength(1);
    // The running job still has its worktree and its mirror.
    expect(existsSync(path.join(treeDir, "README.md"))).toBe(true);
    expect(existsSync(cache.mirrorPath(repo.bare.url))).toBe(true);

    await finish();
    expect(await filesOf(cache, repo)).toEqual([]);
    expect(existsSync(treeDir)).toBe(false);
  });
});

describe("WorkdirKeeper: BLUEPRINT_WORKDIR_MAX_GB", () => {
  it("evicts the least recently used repositories first, only as many as the bound needs", async () => {
    const workdir = tempDir("blueprint-keeper-");
    const cache = new RepoCache(workdir);
    const unbounded = new WorkdirKeeper(cache);
    const [a, b, c] = ["a", "b", "c"].map((name) =>
      repository(1, "octo-org", name, { "data.txt": `${name}\n`.repeat(20_000) }),
    ) as [Repo, Repo, Repo];
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
    const { finish } = await runningJob(keeper, cache, busy);
    // The quick job ends over the bound: its own repository goes, the busy one stays.
    await job(keeper, cache, quick);
    expect(await filesOf(cache, quick)).toEqual([]);
    expect(existsSync(cache.mirrorPath(busy.bare.url))).toBe(true);

    await finish();
    expect(await filesOf(cache, busy)).toEqual([]);
    expect((await readDiskUse(cache.workdir, 1)).workdirBytes).toBe(0);
  });

  it("at start removes worktrees an earlier process left and checks the bound", async () => {
    const workdir = tempDir("blueprint-keeper-");
    const earlier = new RepoCache(workdir, { identity: goneProcess() });
    const repo = repository(1, "octo-org", "left");
    const crashed = await earlier.prepare({ cloneUrl: repo.bare.url, ref: "refs/heads/main" }); // never handed back
    const cache = new RepoCache(workdir);
    const keeper = new WorkdirKeeper(cache);
    expect(await keeper.start()).toEqual([]);
    expect(existsSync(crashed.dir)).toBe(false);
    expect(readdirSync(path.join(workdir, "processes"))).toEqual([`${cache.identity.id}.json`]); // the gone one forgotten
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
    const keeper = new WorkdirKeeper(new RepoCache(workdir), {
      maxBytes: 1,
      log: { info: () => undefined, warn: (_fields, message = "") => void warnings.push(message) },
    });
    expect(await keeper.start()).toEqual([]);
    expect(warnings).toEqual([]);
    expect((await readDiskUse(workdir, 1)).workdirBytes).toBe(0);
  });
});

describe("WorkdirKeeper: one keeper per directory", () => {
  it("claims atomically: of many processes claiming at once exactly one keeps the directory", async () => {
    const workdir = tempDir("blueprint-keeper-");
    const claimants = Array.from({ length: 8 }, () => newIdentity(process.pid));
    const holders = await Promise.all(claimants.map((identity) => claimWorkdir(workdir, identity)));
    const keepers = claimants.filter((_, index) => holders[index] === null);
    expect(keepers).toHaveLength(1);
    const keeper = keepers[0]?.id;
    expect(holders.filter((holder) => holder !== null)).toEqual(Array.from({ length: 7 }, () => keeper));
    expect(JSON.parse(readFileSync(path.join(workdir, "keeper.json"), "utf8"))).toEqual({ id: keeper });
  });

  it("between two processes, one keeps the directory, and another takes it over once that one has exited", async () => {
    const workdir = tempDir("blueprint-keeper-");
    const [first, second] = [claimant(workdir), claimant(workdir)];
    const answers = await Promise.all([first.answer, second.answer]);
    const keeperIndex = answers.findIndex((answer) => answer.holder === null);
    expect(keeperIndex).toBeGreaterThanOrEqual(0);
    const keeper = keeperIndex === 0 ? first : second;
    const other = keeperIndex === 0 ? second : first;
    const keeperId = answers[keeperIndex]?.id;
    expect(answers.map((answer) => answer.holder)).toEqual(keeperIndex === 0 ? [null, keeperId] : [keeperId, null]);

    // A third process stands down while the keeper lives, and takes over once it has exited.
    const third = newIdentity(process.pid);
    expect(await claimWorkdir(workdir, third)).toBe(keeperId);
    keeper.child.stdin?.end();
    await once(keeper.child, "exit");
    expect(await claimWorkdir(workdir, third)).toBeNull();
    other.child.stdin?.end();
    await once(other.child, "exit");
  });

  it("with two live processes on one directory, neither sweeps nor evicts nor removes what the other uses", async () => {
    const workdir = tempDir("blueprint-keeper-");
    const theirCache = new RepoCache(workdir, { identity: liveProcess() });
    const theirs = new WorkdirKeeper(theirCache);
    await theirs.start(); // keeps the directory
    const repo = repository(1, "octo-org", "shared");
    const { tree: theirTree, finish: finishTheirs } = await runningJob(theirs, theirCache, repo);

    const { warnings, log } = collectWarnings();
    const ourCache = new RepoCache(workdir);
    const ours = new WorkdirKeeper(ourCache, { maxBytes: 1, log });
    expect(await ours.start()).toEqual([]);
    expect(await ours.enforceLimit()).toEqual([]);
    expect(warnings).toEqual([expect.stringContaining("another process keeps this work directory")]); // once
    expect(existsSync(path.join(theirTree, "README.md"))).toBe(true);

    // An uninstall heard here leaves their repository to them (they hear it too).
    const removal = await ours.remove({ installationId: 1, repositories: null });
    expect(removal).toEqual({ removed: [], deferred: [], left: [theirCache.mirrorPath(repo.bare.url)] });
    expect(existsSync(path.join(theirTree, "README.md"))).toBe(true);

    // Their process is restarted (the old one gone), and the new one takes the directory over: it
    // sweeps and evicts what the old one left, never what a job of ours uses.
    const mine = repository(2, "octo-org", "mine");
    const { tree: ourTree, finish: finishOurs } = await runningJob(ours, ourCache, mine);
    const theirIdentity = theirCache.identity;
    writeFileSync(
      path.join(workdir, "processes", `${theirIdentity.id}.json`),
      JSON.stringify({ ...goneProcess(), id: theirIdentity.id }),
    );
    const restarted = new WorkdirKeeper(new RepoCache(workdir, { identity: liveProcess() }), { maxBytes: 1 });
    expect(await restarted.start()).toEqual([theirCache.mirrorPath(repo.bare.url)]);
    expect(existsSync(theirTree)).toBe(false);
    expect(existsSync(path.join(ourTree, "README.md"))).toBe(true);
    expect(existsSync(ourCache.mirrorPath(mine.bare.url))).toBe(true);

    await Promise.all([finishTheirs(), finishOurs()]);
  });

  it("takes the directory over from a keeper whose pid another process now has, and sweeps its trees", async () => {
    const workdir = tempDir("blueprint-keeper-");
    // The earlier keeper's pid is alive, but as an unrelated process (another start time): its claim is stale.
    const reused = newIdentity(process.ppid, "0");
    const earlier = new RepoCache(workdir, { identity: reused });
    const repo = repository(1, "octo-org", "reused");
    const crashed = await earlier.prepare({ cloneUrl: repo.bare.url, ref: "refs/heads/main" });
    expect(await claimWorkdir(workdir, reused)).toBeNull();

    const { warnings, log } = collectWarnings();
    const keeper = new WorkdirKeeper(new RepoCache(workdir), { log });
    await keeper.start();
    expect(warnings).toEqual([]);
    expect(existsSync(crashed.dir)).toBe(false);
    expect(JSON.parse(readFileSync(path.join(workdir, "keeper.json"), "utf8"))).toEqual({ id: currentIdentity().id });
  });

  it("takes the directory over from a keeper whose pid it has itself (a container restarted)", async () => {
    const workdir = tempDir("blueprint-keeper-");
    const beforeRestart = newIdentity(process.pid, "0");
    expect(await claimWorkdir(workdir, beforeRestart)).toBeNull();
    const afterRestart = newIdentity(process.pid);
    expect(await claimWorkdir(workdir, afterRestart)).toBeNull();
    expect(await claimWorkdir(workdir, beforeRestart)).toBe(afterRestart.id);
  });

  it("stands down while the keeper lives and takes over at the next check once it is gone", async () => {
    const workdir = tempDir("blueprint-keeper-");
    const keeperIdentity = liveProcess();
    expect(await claimWorkdir(workdir, keeperIdentity)).toBeNull();
    const repo = repository(1, "octo-org", "big");
    const { warnings, log } = collectWarnings();
    const cache = new RepoCache(workdir);
    const keeper = new WorkdirKeeper(cache, { maxBytes: 1, log });
    await job(keeper, cache, repo);
    expect(existsSync(cache.mirrorPath(repo.bare.url))).toBe(true);
    expect(warnings).toHaveLength(1);

    // The keeper's process exits (its record now names a dead process).
    writeFileSync(
      path.join(workdir, "processes", `${keeperIdentity.id}.json`),
      JSON.stringify({ ...goneProcess(), id: keeperIdentity.id }),
    );
    expect(await keeper.enforceLimit()).toEqual([cache.mirrorPath(repo.bare.url)]);
    expect(await filesOf(cache, repo)).toEqual([]);
  });

  it("counts a process it cannot see (another pid namespace) alive while its mark is fresh", async () => {
    const workdir = tempDir("blueprint-keeper-");
    const elsewhere: ProcessIdentity = { ...newIdentity(1, "5"), pidNamespace: "pid:[1]" };
    await register(workdir, elsewhere);
    const self = newIdentity(process.pid);
    expect(await claimWorkdir(workdir, elsewhere)).toBeNull();
    expect(await claimWorkdir(workdir, self)).toBe(elsewhere.id);
    const stale = new Date(Date.now() - LEASE_MS - 60_000);
    utimesSync(path.join(workdir, "processes", `${elsewhere.id}.json`), stale, stale);
    expect(await claimWorkdir(workdir, self)).toBeNull();
  });
});

describe("WorkdirKeeper: the owner record", () => {
  it("is written at sync: an uninstall removes a mirror whose job never finished (its process died mid-job)", async () => {
    const workdir = tempDir("blueprint-keeper-");
    const deadCache = new RepoCache(workdir, { identity: goneProcess() });
    const repo = repository(9, "octo-org", "unfinished");
    const synced = deferred();
    // The job syncs, makes its worktree, and then its process is gone: the job never ends.
    void new WorkdirKeeper(deadCache).use(repo.owner, async () => {
      await deadCache.prepare({ cloneUrl: repo.bare.url, ref: "refs/heads/main" });
      synced.resolve();
      await new Promise<never>(() => undefined);
    });
    await synced.promise;
    expect(existsSync(path.join(deadCache.mirrorPath(repo.bare.url), "blueprint-repository.json"))).toBe(true);

    const cache = new RepoCache(workdir);
    const result = await new WorkdirKeeper(cache).remove({ installationId: 9, repositories: null });
    expect(result).toEqual({ removed: [cache.mirrorPath(repo.bare.url)], deferred: [], left: [] });
    expect(await filesOf(cache, repo)).toEqual([]);
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
