import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { dispatchToolCall } from "../../src/tools/registry.js";
import { checkBubblewrap, createCommandRunner } from "../../src/workspace/command-runner.js";
import { RepoCache } from "../../src/workspace/repo-cache.js";
import type { Workspace } from "../../src/workspace/workspace.js";
import { createBareRepo, tempDir } from "../helpers/git-repo.js";

/**
 * What one job leaves in a repository's mirror or pooled worktree must not reach the next job (real git, real
 * bubblewrap).
 */

const check = checkBubblewrap();
const sandboxed = createCommandRunner({ bwrapPath: "path" in check ? check.path : null });
const open: Workspace[] = [];
afterEach(async () => {
  for (const ws of open.splice(0)) await ws.dispose().catch(() => undefined);
});

async function agent(ws: Workspace, command: string): Promise<void> {
  const result = await sandboxed.run(command, { cwd: ws.dir });
  if (result.exitCode !== 0) throw new Error(`agent command failed (${result.exitCode}): ${result.output}`);
}

/** Names that are globs, negations, comments or escapes in a gitignore file. */
const AWKWARD_NAMES = ["*", "a?c", "[ab]", "!keep", "#hash", "trail ", "back\\slash", "dir*/"];

describe("setup output hidden from commits (ignoreUntracked)", () => {
  it("has bubblewrap here", () => expect(sandboxed.isolation).toBe("bwrap"));

  it("lists each name literally in the worktree's own exclude file: glob-like names hide only themselves, and the mirror's shared info/exclude stays empty", async () => {
    const repo = createBareRepo({ "README.md": "# r\n", "src/a.txt": "a\n" });
    const cache = new RepoCache(tempDir("leftovers-exclude-"), { poolSize: 0 });
    const ws = await cache.prepare({ cloneUrl: repo.url, ref: "refs/heads/main" });
    open.push(ws);
    for (const name of AWKWARD_NAMES) {
      if (name.endsWith("/")) mkdirSync(path.join(ws.dir, name), { recursive: true });
      writeFileSync(path.join(ws.dir, name.endsWith("/") ? `${name}f` : name), "setup output\n");
    }
    writeFileSync(path.join(ws.dir, "line\nbreak"), "setup output\n");
    await ws.ignoreUntracked();
    expect(await ws.changes(), "only the name no pattern can hold is left").toEqual(['"line\\nbreak"']);
    // The agent's list_files tool does not list them either.
    const listed = await dispatchToolCall("list_files", "{}", {
      root: ws.dir,
      mode: "build",
      runner: sandboxed,
      filesRead: new Set(),
      audit: [],
      allowWorkflowWrites: false,
    });
    expect(listed.content).toContain("README.md");
    expect(listed.content).not.toContain("#hash");
    expect(listed.content).not.toContain("a?c");
    // The agent then adds files that the unescaped patterns would have matched.
    for (const name of ["abc", "b", "keep", "src/new.js", "trail", "dirx/f"]) {
      mkdirSync(path.dirname(path.join(ws.dir, name)), { recursive: true });
      writeFileSync(path.join(ws.dir, name), "agent's work\n");
    }
    expect((await ws.changes()).sort()).toEqual([
      '"line\\nbreak"',
      "abc",
      "b",
      "dirx/f",
      "keep",
      "src/new.js",
      "trail",
    ]);
    expect(readFileSync(path.join(cache.mirrorPath(repo.url), "info", "exclude"), "utf8")).toBe("");
  });

  it("a file named `*` left by one job's setup does not hide the next job's new files", async () => {
    const repo = createBareRepo({ "README.md": "# r\n", "src/a.txt": "a\n" });
    const cache = new RepoCache(tempDir("leftovers-star-"), { poolSize: 1 });
    const a = await cache.prepare({ cloneUrl: repo.url, ref: "refs/heads/main" });
    open.push(a);
    await agent(a, "touch '*' && mkdir -p node_modules/x && touch node_modules/x/i.js");
    await a.ignoreUntracked();
    expect(await a.changes()).toEqual([]);
    await a.dispose();
    open.splice(0);
    for (const pooled of [true, false]) {
      const b = await cache.prepare({ cloneUrl: repo.url, ref: "refs/heads/main" });
      open.push(b);
      mkdirSync(path.join(b.dir, "src", "feature"), { recursive: true });
      writeFileSync(path.join(b.dir, "src", "feature", "new.js"), "export const x = 1;\n");
      writeFileSync(path.join(b.dir, "node_modules"), "a file this time\n");
      expect((await b.changes()).sort(), pooled ? "in the pooled worktree" : "in a fresh worktree").toEqual([
        "node_modules",
        "src/feature/new.js",
      ]);
      if (pooled) {
        // A second job at once gets a fresh worktree.
        const c = await cache.prepare({ cloneUrl: repo.url, ref: "refs/heads/main" });
        open.push(c);
        writeFileSync(path.join(c.dir, "new.txt"), "c\n");
        expect(await c.changes()).toEqual(["new.txt"]);
      }
      for (const ws of open.splice(0)) await ws.dispose();
    }
  });
});

describe("the worktree pool", () => {
  it("removes, not pools, a tree with a `.git` below its top (reset, clean and status --ignored pass over it)", async () => {
    const repo = createBareRepo({ "README.md": "# r\n", "src/a.txt": "a\n" });
    const cache = new RepoCache(tempDir("leftovers-pool-"), { poolSize: 2 });
    const a = await cache.prepare({ cloneUrl: repo.url, ref: "refs/heads/main" });
    await agent(
      a,
      "mkdir -p src/.git && echo 'left by job A: instructions for the next agent' > src/.git/NOTES && chmod -R a+rwx src/.git",
    );
    const dirA = a.dir;
    await a.dispose();
    expect(existsSync(dirA), "the tree was removed").toBe(false);
    const b = await cache.prepare({ cloneUrl: repo.url, ref: "refs/heads/main" });
    open.push(b);
    expect(b.dir).not.toBe(dirA);
    expect(existsSync(path.join(b.dir, "src", ".git"))).toBe(false);
  });

  it("also for a `.git` file deep in a tracked directory, and still pools a tree without one", async () => {
    const repo = createBareRepo({ "README.md": "# r\n", "src/deep/er/a.txt": "a\n" });
    const cache = new RepoCache(tempDir("leftovers-pool-file-"), { poolSize: 2 });
    const a = await cache.prepare({ cloneUrl: repo.url, ref: "refs/heads/main" });
    await agent(a, "echo junk > scratch.txt");
    const dirA = a.dir;
    await a.dispose();
    const b = await cache.prepare({ cloneUrl: repo.url, ref: "refs/heads/main" });
    expect(b.dir, "a clean tree is reused").toBe(dirA);
    expect(existsSync(path.join(b.dir, "scratch.txt"))).toBe(false);
    // git never touches a path named `.git`, whatever it holds.
    await agent(b, "printf 'notes for the next agent\\n' > src/deep/er/.git");
    await b.dispose();
    expect(existsSync(dirA)).toBe(false);
  });
});
