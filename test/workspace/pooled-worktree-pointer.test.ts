import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RepoCache } from "../../src/workspace/repo-cache.js";
import type { Workspace } from "../../src/workspace/workspace.js";
import { createBareRepo, gitIn, tempDir } from "../helpers/git-repo.js";

/**
 * A pooled worktree reaches the next job with Blueprint's `.git` pointer, whatever the job before did
 * to it: the next job's commands (its agent's `git log`) find the repository through that pointer
 * before any Blueprint git call would put it back.
 */

const open: Workspace[] = [];
afterEach(async () => {
  for (const ws of open.splice(0)) await ws.dispose();
});

/**
 * What one job's agent leaves instead of the pointer: another git directory of its own making, by a file or a
 * directory.
 */
const rewrites = {
  "a pointer to a git directory of its own": (dir: string, evil: string) =>
    writeFileSync(path.join(dir, ".git"), `gitdir: ${evil}\n`),
  "a directory with a config of its own": (dir: string) => {
    rmSync(path.join(dir, ".git"));
    mkdirSync(path.join(dir, ".git", "objects"), { recursive: true });
    mkdirSync(path.join(dir, ".git", "refs"), { recursive: true });
    writeFileSync(path.join(dir, ".git", "HEAD"), "ref: refs/heads/main\n");
    writeFileSync(
      path.join(dir, ".git", "config"),
      "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = /tmp/run-me-as-the-app\n",
    );
  },
};

describe("the worktree the next job gets from the pool", () => {
  it.each(Object.keys(rewrites) as Array<keyof typeof rewrites>)(
    "has Blueprint's .git pointer again after the job before left %s",
    async (kind) => {
      const repo = createBareRepo({ "README.md": "# r\n" });
      const cache = new RepoCache(tempDir("pooled-pointer-"), { poolSize: 1 });
      const first = await cache.prepare({ cloneUrl: repo.url, ref: "refs/heads/main" });
      const pointer = readFileSync(path.join(first.dir, ".git"), "utf8");
      const blueprintsGitDir = /^gitdir: (.+)$/.exec(pointer.trim())?.[1] ?? "";
      expect(path.dirname(blueprintsGitDir)).toBe(path.join(cache.mirrorPath(repo.url), "worktrees"));

      // The first job's agent replaces the pointer; its job ends and the tree goes back to the pool.
      const evil = tempDir("pooled-pointer-evil-");
      gitIn(evil, ["init", "--quiet", "--bare"]);
      rewrites[kind](first.dir, evil);
      await first.dispose();

      // The next job on the repository gets the same tree, pointer restored before anything runs in it.
      const next = await cache.prepare({ cloneUrl: repo.url, ref: "refs/heads/main" });
      open.push(next);
      expect(next.dir).toBe(first.dir);
      expect(readFileSync(path.join(next.dir, ".git"), "utf8")).toBe(pointer);
      // As the next agent's own git would find its repository (plain git, following the pointer):
      expect(gitIn(next.dir, ["rev-parse", "--absolute-git-dir"]).trim()).toBe(blueprintsGitDir);
      expect(gitIn(next.dir, ["log", "--format=%s"]).trim()).toBe("initial commit");
    },
  );
});
