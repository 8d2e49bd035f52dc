import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gitRead } from "../../src/tools/git-read.js";
import { findNestedGit, NestedRepositoryError } from "../../src/workspace/nested-git.js";
import { RepoCache } from "../../src/workspace/repo-cache.js";
import type { Workspace } from "../../src/workspace/workspace.js";
import { createBareRepo, gitIn, tempDir, type BareRepo } from "../helpers/git-repo.js";

// A step ran `git init sub`, committed a file there, and Blueprint's commit (before this guard)
// recorded `sub` as a gitlink. The next step gives `sub/.git` a config that names a command and
// touches a file. Plain git descends into `sub` with that repository's own config and runs the
// command, outside the sandbox. Each test: Blueprint's call refuses with a NestedRepositoryError
// before any git runs, and nothing ran; then plain git in the same tree runs it (the control).

const identity = { name: "blueprint[bot]", email: "bot@example.test" };

const open: Workspace[] = [];
afterEach(async () => {
  for (const workspace of open.splice(0)) await workspace.dispose().catch(() => undefined);
});

/** Disposes a workspace in the test itself (not again after it). */
async function disposeNow(ws: Workspace): Promise<void> {
  open.splice(open.indexOf(ws), 1);
  await ws.dispose();
}

interface Armed {
  repo: BareRepo;
  cache: RepoCache;
  ws: Workspace;
  /** The commit that recorded `sub` as a gitlink. */
  stepOne: string;
  /** Whether the planted command ran (it writes this file, outside the tree). */
  ran(): boolean;
  /** Forgets that it ran and touches the file the step changed again, so the trap is set anew. */
  rearm(): void;
}

type Route = "filter" | "fsmonitor" | "hooks" | "core.worktree" | "include.path";

/** Writes the route's config into `sub/.git` (with the files it needs); returns the file the next step touches. */
const ROUTES: Record<Route, (tree: string, script: string) => string> = {
  filter(tree, script) {
    writeFileSync(path.join(tree, "sub", ".gitattributes"), "* filter=x\n");
    nestedConfig(tree, "filter.x.clean", script);
    return path.join(tree, "sub", "f");
  },
  fsmonitor(tree, script) {
    nestedConfig(tree, "core.fsmonitor", script);
    return path.join(tree, "sub", "f");
  },
  hooks(tree, script) {
    // git writes the nested index after refreshing it, and runs post-index-change then.
    mkdirSync(path.join(tree, "hooks"));
    for (const hook of ["post-index-change", "pre-commit", "post-checkout", "pre-push", "reference-transaction"]) {
      writeFileSync(path.join(tree, "hooks", hook), `#!/bin/sh\nexec '${script}' "$@"\n`, { mode: 0o755 });
    }
    nestedConfig(tree, "core.hooksPath", path.join(tree, "hooks"));
    return path.join(tree, "sub", "f");
  },
  "core.worktree"(tree, script) {
    // The nested repository's files are elsewhere in the tree; nothing in `sub/` but `.git` says so.
    mkdirSync(path.join(tree, "elsewhere"));
    writeFileSync(path.join(tree, "elsewhere", "f"), "f\n");
    writeFileSync(path.join(tree, "elsewhere", ".gitattributes"), "* filter=x\n");
    nestedConfig(tree, "core.worktree", "../../elsewhere");
    nestedConfig(tree, "filter.x.clean", script);
    return path.join(tree, "elsewhere", "f");
  },
  "include.path"(tree, script) {
    // `sub/.git/config` itself names nothing but another file, which defines the filter.
    writeFileSync(path.join(tree, "nested.config"), `[filter "x"]\n\tclean = ${script}\n`);
    writeFileSync(path.join(tree, "sub", ".gitattributes"), "* filter=x\n");
    nestedConfig(tree, "include.path", "../../nested.config");
    return path.join(tree, "sub", "f");
  },
};

function nestedConfig(tree: string, key: string, value: string): void {
  gitIn(tree, ["--git-dir", path.join(tree, "sub", ".git"), "config", key, value]);
}

let bumps = 0;
/**
 * The step touches the file: a later time, the same content. git must hash it again (through a
 * clean filter) and then writes the refreshed index (and runs post-index-change); a changed content
 * would leave the entry stale and the index unwritten, depending on the clock.
 */
function touch(file: string): void {
  const later = Date.now() / 1000 + 60 + ++bumps;
  utimesSync(file, later, later);
}

/** A worktree after step 1 made `sub` a gitlink, with the route planted in `sub/.git`. */
async function armed(
  route: Route,
  options: { poolSize?: number; beforeArming?: (j: Omit<Armed, "ran" | "rearm">) => Promise<void> } = {},
): Promise<Armed> {
  const repo = createBareRepo({ "README.md": "# repo\n" });
  const cache = new RepoCache(tempDir("blueprint-nested-"), { poolSize: options.poolSize ?? 0 });
  const ws = await cache.prepare({ cloneUrl: repo.url, ref: "refs/heads/main" });
  open.push(ws);
  const sub = path.join(ws.dir, "sub");
  mkdirSync(sub);
  gitIn(sub, ["init", "-q"]);
  writeFileSync(path.join(sub, "f"), "f\n");
  gitIn(sub, ["add", "f"]);
  gitIn(sub, ["commit", "-q", "-m", "nested"]);
  gitIn(ws.dir, ["add", "--all"]);
  gitIn(ws.dir, ["commit", "-q", "-m", "S1: make sub"]);
  const stepOne = gitIn(ws.dir, ["rev-parse", "HEAD"]).trim();
  expect(gitIn(ws.dir, ["ls-tree", "HEAD", "sub"])).toMatch(/^160000 commit /);
  await options.beforeArming?.({ repo, cache, ws, stepOne });

  const marker = path.join(tempDir("blueprint-marker-"), "ran");
  const script = path.join(ws.dir, "evil.sh");
  writeFileSync(script, `#!/bin/sh\necho "$0 $*" >> '${marker}'\ncat\n`, { mode: 0o755 });
  const trigger = ROUTES[route](ws.dir, script);
  touch(trigger);
  return {
    repo,
    cache,
    ws,
    stepOne,
    ran: () => existsSync(marker),
    rearm() {
      rmSync(marker, { force: true });
      touch(trigger);
    },
  };
}

/** git as a person runs it: their own environment (an empty HOME here), no Blueprint settings. */
function plainGit(cwd: string, args: string[]): void {
  spawnSync("git", args, {
    cwd,
    env: {
      PATH: process.env.PATH,
      HOME: tempDir("blueprint-plain-home-"),
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_NAME: "a",
      GIT_AUTHOR_EMAIL: "a@example.test",
      GIT_COMMITTER_NAME: "a",
      GIT_COMMITTER_EMAIL: "a@example.test",
    },
    stdio: "ignore",
  });
}

const REFUSED = /nested git repository at `sub\/` \(`sub\/\.git`\)/;

interface Call {
  /** Plain git's own way to do the same, in the same tree: it runs the planted command (the control). */
  plain(j: Armed): string[][];
  /** Blueprint's call, and what it must leave behind; `ran()` is checked after it. */
  blueprint(j: Armed): Promise<void>;
  poolSize?: number;
  /** Blueprint's call removes the tree, so the control runs before it. */
  removesTree?: boolean;
  beforeArming?: (j: Omit<Armed, "ran" | "rearm">) => Promise<void>;
}

const CALLS: Record<string, Call> = {
  "status (changes)": {
    plain: () => [["status", "--porcelain"]],
    async blueprint(j) {
      await expect(j.ws.changes()).rejects.toThrow(REFUSED);
    },
  },
  "add and commit (commitAll)": {
    plain: () => [
      ["add", "--all"],
      ["commit", "-q", "-m", "S2"],
    ],
    async blueprint(j) {
      const head = gitIn(j.ws.dir, ["rev-parse", "HEAD"]).trim();
      await expect(j.ws.commitAll("S2: touch sub/f", identity)).rejects.toThrow(NestedRepositoryError);
      expect(gitIn(j.ws.dir, ["rev-parse", "HEAD"]).trim()).toBe(head);
    },
  },
  "diff (diffSince, diffSummary)": {
    // Blueprint diffs commits; plain `git diff <base> HEAD` does not look into `sub` (git 2.39), but
    // the diff of the working tree, which a person runs to see a step's work, does.
    plain: () => [["diff", "HEAD"]],
    async blueprint(j) {
      await expect(j.ws.diffSince(j.ws.baseSha)).rejects.toThrow(REFUSED);
      expect(await j.ws.diffSummary(j.ws.baseSha)).toMatch(REFUSED);
    },
  },
  push: {
    // Blueprint pushes from the mirror. Plain `git push` does not look into `sub` (git 2.39, also
    // with --recurse-submodules=check or on-demand): the control shows the trap set in this tree.
    plain: () => [["status", "--porcelain"]],
    async blueprint(j) {
      await expect(j.ws.push("blueprint/issue-2", null)).rejects.toThrow(REFUSED);
      expect(
        spawnSync("git", ["--git-dir", j.repo.bare, "rev-parse", "--verify", "--quiet", "refs/heads/blueprint/issue-2"])
          .status,
      ).toBe(1);
    },
  },
  "worktree reuse": {
    poolSize: 1,
    removesTree: true,
    // The tree goes idle in the pool (its nested `.git` set aside so release keeps it), then the
    // repository is planted there, as anything still writing after the job would.
    async beforeArming({ repo, ws, stepOne }) {
      gitIn(ws.dir, ["push", "-q", repo.bare, `${stepOne}:refs/heads/blueprint/issue-1`]);
      const aside = path.join(tempDir("blueprint-aside-"), "git");
      renameSync(path.join(ws.dir, "sub", ".git"), aside);
      await disposeNow(ws);
      renameSync(aside, path.join(ws.dir, "sub", ".git"));
    },
    plain: (j) => [
      ["checkout", "-q", "--force", "--detach", j.stepOne],
      ["status", "--porcelain", "--ignored", "--untracked-files=all"],
    ],
    async blueprint(j) {
      const next = await j.cache.prepare({ cloneUrl: j.repo.url, ref: "refs/heads/blueprint/issue-1" });
      open.push(next);
      expect(next.dir).not.toBe(j.ws.dir);
      expect(existsSync(j.ws.dir), "removed by the file system, not reused").toBe(false);
      expect(await next.head()).toBe(j.stepOne);
    },
  },
  "clean-up (release)": {
    poolSize: 1,
    removesTree: true,
    // Plain `git reset --hard` and `git clean -ffdx` do not look into `sub` (git 2.39), and
    // `git worktree remove` refuses a tree with submodules: the control shows the trap set in this tree.
    plain: () => [["status", "--porcelain"]],
    async blueprint(j) {
      const mirror = j.cache.mirrorPath(j.repo.url);
      await disposeNow(j.ws);
      expect(existsSync(j.ws.dir), "removed, not pooled").toBe(false);
      expect(gitIn(mirror, ["worktree", "list", "--porcelain"]), "and forgotten by the mirror").not.toContain(j.ws.dir);
    },
  },
};

const ROUTE_NAMES = Object.keys(ROUTES) as Route[];
const CASES = Object.keys(CALLS).flatMap((call) => ROUTE_NAMES.map((route) => ({ call, route })));

describe("no Blueprint git reads a nested repository's config", () => {
  it.each(CASES)(
    "$call, $route: plain git runs the planted command; Blueprint refuses and runs nothing",
    async ({ call, route }) => {
      const spec = CALLS[call];
      if (!spec) throw new Error(`no call ${call}`);
      const j = await armed(route, { poolSize: spec.poolSize, beforeArming: spec.beforeArming });
      const control = () => {
        for (const args of spec.plain(j)) plainGit(j.ws.dir, args);
        expect(j.ran(), "plain git runs the nested repository's command").toBe(true);
      };
      // Where Blueprint removes the tree, the control goes first and the same trap is set again.
      if (spec.removesTree) {
        control();
        j.rearm();
      }
      await spec.blueprint(j);
      expect(j.ran(), "Blueprint ran it").toBe(false);
      if (!spec.removesTree) control();
    },
  );
});

describe("what counts as a nested repository", () => {
  it("a `.git` file (the `gitdir:` pointer form) below the top, whose git directory lies elsewhere, counts like a directory", async () => {
    const j = await armed("fsmonitor");
    renameSync(path.join(j.ws.dir, "sub", ".git"), path.join(j.ws.dir, ".sub-git"));
    writeFileSync(path.join(j.ws.dir, "sub", ".git"), "gitdir: ../.sub-git\n");
    await expect(j.ws.commitAll("S2", identity)).rejects.toThrow(REFUSED);
    await expect(j.ws.changes()).rejects.toThrow(REFUSED);
    expect(j.ran()).toBe(false);
    plainGit(j.ws.dir, ["status", "--porcelain"]);
    expect(j.ran(), "plain git follows the pointer and runs the fsmonitor").toBe(true);
  });

  it("a submodule the base repository has keeps its gitlink through a step's commit and push; initialised by a command, it stops the step", async () => {
    const repo = createBareRepo({
      "README.md": "# repo\n",
      ".gitmodules": '[submodule "dep"]\n\tpath = lib/dep\n\turl = https://example.test/dep.git\n',
    });
    const pinned = repo.head(); // any commit id does for the submodule's
    gitIn(repo.seed, ["update-index", "--add", "--cacheinfo", `160000,${pinned},lib/dep`]);
    gitIn(repo.seed, ["commit", "-q", "-m", "add the submodule"]);
    gitIn(repo.seed, ["push", "-q", "origin", "HEAD:refs/heads/main"]);
    const ws = await new RepoCache(tempDir("blueprint-nested-"), { poolSize: 0 }).prepare({
      cloneUrl: repo.url,
      ref: "refs/heads/main",
    });
    open.push(ws);
    expect(readdirSync(path.join(ws.dir, "lib", "dep")), "checked out as an empty directory").toEqual([]);

    writeFileSync(path.join(ws.dir, "README.md"), "# changed\n");
    expect(await ws.changes()).toEqual(["README.md"]);
    const commit = await ws.commitAll("S1: change the readme", identity);
    expect(commit?.changedFiles).toEqual(["README.md"]);
    await ws.push("blueprint/issue-1", null);
    expect(gitIn(repo.bare, ["ls-tree", "refs/heads/blueprint/issue-1", "lib/dep"])).toBe(
      `160000 commit ${pinned}\tlib/dep\n`,
    );

    gitIn(path.join(ws.dir, "lib", "dep"), ["init", "-q"]);
    writeFileSync(path.join(ws.dir, "lib", "dep", "x.txt"), "x\n");
    await expect(ws.changes()).rejects.toThrow(/nested git repository at `lib\/dep\/` \(`lib\/dep\/\.git`\)/);
  });

  it("a gitlink in the index that the base commit did not have stops the step, though no `.git` is in the tree", async () => {
    const repo = createBareRepo({ "README.md": "# repo\n" });
    const ws = await new RepoCache(tempDir("blueprint-nested-"), { poolSize: 0 }).prepare({
      cloneUrl: repo.url,
      ref: "refs/heads/main",
    });
    open.push(ws);
    // What a command could do where no sandbox keeps the index read-only (BLUEPRINT_SANDBOX=none).
    gitIn(ws.dir, ["update-index", "--add", "--cacheinfo", `160000,${ws.baseSha},ghost`]);
    await expect(ws.commitAll("S1", identity)).rejects.toThrow(/a gitlink\) at `ghost`/);
    await expect(ws.push("blueprint/issue-1", null)).rejects.toThrow(NestedRepositoryError);
  });

  it("the read tools run no git over a nested repository, and tell the agent which `.git` to delete", async () => {
    const j = await armed("fsmonitor");
    const listed = await gitRead(j.ws.dir, ["ls-files", "--cached", "--others", "--exclude-standard"]);
    expect(listed.code).not.toBe(0);
    expect(listed.stderr).toMatch(/delete `sub\/\.git`/);
    expect(listed.stderr).not.toContain("\n");
    expect(j.ran()).toBe(false);
    rmSync(path.join(j.ws.dir, "sub", ".git"), { recursive: true });
    expect((await gitRead(j.ws.dir, ["ls-files"])).stdout).toContain("sub");
  });

  it("finds `.git` as a directory, file or symlink, in any case, without following symlinks; the top's own is Blueprint's", async () => {
    const tree = tempDir("blueprint-walk-");
    writeFileSync(path.join(tree, ".git"), "gitdir: /elsewhere\n");
    mkdirSync(path.join(tree, "a", "b"), { recursive: true });
    writeFileSync(path.join(tree, "a", "b", "file.txt"), "x\n");
    const outside = tempDir("blueprint-walk-outside-");
    mkdirSync(path.join(outside, "repo", ".git"), { recursive: true });
    symlinkSync(outside, path.join(tree, "a", "link"));
    expect(await findNestedGit(tree), "the top's .git and a symlink's target do not count").toBeNull();

    for (const [name, make] of [
      [".git", (at: string) => mkdirSync(at)],
      [".git", (at: string) => writeFileSync(at, "gitdir: ../../x\n")],
      [".git", (at: string) => symlinkSync(path.join(outside, "repo", ".git"), at)],
      [".GIT", (at: string) => mkdirSync(at)],
      [".g\u200cit", (at: string) => mkdirSync(at)],
    ] as const) {
      const at = path.join(tree, "a", "b", name);
      make(at);
      expect(await findNestedGit(tree)).toEqual({ kind: "repository", entry: path.join("a", "b", name) });
      rmSync(at, { recursive: true });
    }
  });

  it("fails closed: a tree it cannot list, or one past its limit, counts as holding a nested repository", async () => {
    const tree = tempDir("blueprint-walk-");
    for (const name of ["a", "b", "c", "d"]) writeFileSync(path.join(tree, name), "");
    expect(await findNestedGit(tree, 3)).toEqual({ kind: "too-many", limit: 3 });
    expect(await findNestedGit(tree, 4)).toBeNull();
    expect(await findNestedGit(path.join(tree, "gone"))).toEqual({ kind: "unreadable", dir: ".", reason: "ENOENT" });
    expect(new NestedRepositoryError({ kind: "too-many", limit: 3 }).message).toMatch(
      /more than 3 files and directories/,
    );
  });
});
