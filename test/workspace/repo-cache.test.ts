import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RepoCache } from "../../src/workspace/repo-cache.js";
import type { Workspace } from "../../src/workspace/workspace.js";
import { createBareRepo, gitIn, tempDir, type BareRepo } from "../helpers/git-repo.js";
import { startGitHubDouble } from "../e2e/double/github-server.js";

const open: Workspace[] = [];
afterEach(async () => {
  for (const workspace of open.splice(0)) await workspace.dispose().catch(() => undefined);
});

async function prepare(cache: RepoCache, repo: BareRepo, sha?: string): Promise<Workspace> {
  const workspace = await cache.prepare({ cloneUrl: repo.url, ref: "refs/heads/main", sha });
  open.push(workspace);
  return workspace;
}
const jobsIn = (cache: RepoCache) => readdirSync(path.join(cache.workdir, "jobs"));

describe("RepoCache", () => {
  it("clones a blobless mirror once and fetches new commits into it for later jobs", async () => {
    const repo = createBareRepo({ "README.md": "# one\n" });
    const cache = new RepoCache(tempDir("blueprint-cache-"));
    const first = await prepare(cache, repo);
    expect(readFileSync(path.join(first.dir, "README.md"), "utf8")).toBe("# one\n");
    const mirror = cache.mirrorPath(repo.url);
    expect(gitIn(mirror, ["config", "remote.origin.partialclonefilter"]).trim()).toBe("blob:none");

    const second = repo.commit({ "README.md": "# two\n" }, "second");
    const later = await prepare(cache, repo);
    expect(later.baseSha).toBe(second);
    expect(readFileSync(path.join(later.dir, "README.md"), "utf8")).toBe("# two\n");
    expect(later.dir).not.toBe(first.dir); // two jobs at once never share a tree
  });

  it("hands a finished job's worktree to the next job spotless, at the next job's commit", async () => {
    const repo = createBareRepo({ "README.md": "# one\n", ".gitignore": "build/\n", "src/a.txt": "a\n" });
    const cache = new RepoCache(tempDir("blueprint-cache-"));
    const first = await prepare(cache, repo);
    // What a job leaves behind: edits, deletions, untracked and ignored files, staged changes. (A tree
    // with a nested repository is removed instead: worktree-leftovers and nested-repositories tests.)
    writeFileSync(path.join(first.dir, "README.md"), "changed\n");
    writeFileSync(path.join(first.dir, "secret.env"), "TOKEN=x\n");
    mkdirSync(path.join(first.dir, "build"));
    writeFileSync(path.join(first.dir, "build", "out.js"), "built\n");
    mkdirSync(path.join(first.dir, "untracked-dir"));
    writeFileSync(path.join(first.dir, "untracked-dir", "x.txt"), "x\n");
    gitIn(first.dir, ["rm", "-q", "src/a.txt"]);
    writeFileSync(path.join(first.dir, "staged.txt"), "staged\n");
    gitIn(first.dir, ["add", "staged.txt"]);
    const dir = first.dir;
    await first.dispose();
    open.splice(open.indexOf(first), 1);

    const second = repo.commit({ "README.md": "# two\n" }, "second");
    const next = await prepare(cache, repo);
    expect(next.dir).toBe(dir);
    expect(next.baseSha).toBe(second);
    expect(await next.head()).toBe(second);
    expect(await next.changes()).toEqual([]);
    expect(readFileSync(path.join(next.dir, "README.md"), "utf8")).toBe("# two\n");
    expect(readFileSync(path.join(next.dir, "src/a.txt"), "utf8")).toBe("a\n");
    for (const gone of ["secret.env", "build", "untracked-dir", "staged.txt"])
      expect(existsSync(path.join(next.dir, gone))).toBe(false);
    expect(gitIn(next.dir, ["status", "--porcelain", "--ignored", "--untracked-files=all"])).toBe("");
  });

  it("can check out an older commit in a reused worktree", async () => {
    const repo = createBareRepo({ "README.md": "# one\n" });
    const cache = new RepoCache(tempDir("blueprint-cache-"));
    const old = repo.head();
    repo.commit({ "README.md": "# two\n", "new.txt": "new\n" }, "second");
    const first = await prepare(cache, repo);
    await first.dispose();
    open.splice(0);
    const back = await prepare(cache, repo, old);
    expect(back.dir).toBe(first.dir);
    expect(readFileSync(path.join(back.dir, "README.md"), "utf8")).toBe("# one\n");
    expect(existsSync(path.join(back.dir, "new.txt"))).toBe(false);
  });

  it("keeps at most its pool size of idle worktrees and removes the rest", async () => {
    const repo = createBareRepo({ "README.md": "# one\n" });
    const cache = new RepoCache(tempDir("blueprint-cache-"), { poolSize: 1 });
    const [a, b] = [await prepare(cache, repo), await prepare(cache, repo)];
    expect(jobsIn(cache)).toHaveLength(2);
    await a.dispose();
    await b.dispose();
    open.splice(0);
    expect(jobsIn(cache)).toEqual([path.basename(a.dir)]);
    expect(gitIn(cache.mirrorPath(repo.url), ["worktree", "list", "--porcelain"]).match(/^worktree /gm)).toHaveLength(
      2,
    ); // the mirror and a
  });

  it("removes every worktree when pooling is off", async () => {
    const repo = createBareRepo({ "README.md": "# one\n" });
    const cache = new RepoCache(tempDir("blueprint-cache-"), { poolSize: 0 });
    const workspace = await prepare(cache, repo);
    await workspace.dispose();
    open.splice(0);
    expect(jobsIn(cache)).toEqual([]);
  });
});

describe("a mirror's lazy blob fetches on a token renewed while the job works", () => {
  it("read the token at each git call: a blob fetched after the first token lapsed comes with the fresh one", async () => {
    const github = await startGitHubDouble({ files: { "README.md": "# hello\n", "docs/guide.md": "read me later\n" } });
    try {
      // The first token lapses once the mirror is made; the job's renewal gives a second one, for an hour.
      const first = github.issueInstallationToken();
      const second = github.issueInstallationToken();
      let current = first;
      const cache = new RepoCache(tempDir("blueprint-cache-"));
      const mirror = await cache.sync({
        cloneUrl: github.cloneUrl,
        ref: "refs/heads/main",
        token: async () => current,
      });
      github.expireToken(first);
      current = second;
      // Blobless: the file's blob was never fetched, so reading it asks GitHub now, with the live token.
      expect(await mirror.readFile("refs/heads/main", "docs/guide.md")).toBe("read me later\n");
      const tree = await mirror.checkout((await mirror.resolve("refs/heads/main")) ?? "");
      open.push(tree);
      expect(readFileSync(path.join(tree.dir, "README.md"), "utf8")).toBe("# hello\n");
      const gitCalls = github.requests.filter((request) => request.kind === "git");
      expect(gitCalls.filter((request) => request.auth === "refused")).toEqual([]);
      expect(gitCalls.length).toBeGreaterThan(2);
    } finally {
      await github.stop();
    }
  });
});
