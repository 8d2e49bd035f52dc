import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RepoCache } from "../../src/workspace/repo-cache.js";
import { recordedGitDir, untrustedGit } from "../../src/workspace/untrusted-git.js";
import type { Workspace } from "../../src/workspace/workspace.js";
import { plantAttack } from "../helpers/attack.js";
import { createBareRepo, gitIn, tempDir } from "../helpers/git-repo.js";

/**
 * A repository's `.gitattributes` may name a diff driver, and a config may define one (a textconv or
 * an external diff command): the mirror's config, which the agent writes where BLUEPRINT_SANDBOX=none
 * leaves it in reach. No such driver runs in a Blueprint diff, not even one asked for without
 * `--no-ext-diff`/`--no-textconv`: the mirror's `info/attributes` selects no diff driver at all.
 */

const identity = { name: "blueprint[bot]", email: "bot@example.test" };
const open: Workspace[] = [];
afterEach(async () => {
  for (const ws of open.splice(0)) await ws.dispose();
});

/** Defines the `evil` diff driver (textconv and external command: both `script`) in a repository's config. */
function defineDriver(gitDir: string, script: string): void {
  gitIn(gitDir, ["config", "diff.evil.textconv", script]);
  gitIn(gitDir, ["config", "diff.evil.command", script]);
}

describe("diff drivers a repository names", () => {
  it("never run in Blueprint's diffs, also without --no-ext-diff/--no-textconv; plain git runs them (control)", async () => {
    const repo = createBareRepo({ ".gitattributes": "* diff=evil\n", "src/a.txt": "a\n" });
    const cache = new RepoCache(tempDir("diff-drivers-"), { poolSize: 0 });
    const ws = await cache.prepare({ cloneUrl: repo.url, ref: "refs/heads/main" });
    open.push(ws);
    const attack = plantAttack(tempDir("diff-drivers-attack-"));
    const mirror = cache.mirrorPath(repo.url);
    defineDriver(mirror, attack.script);

    writeFileSync(path.join(ws.dir, "src", "a.txt"), "changed\n");
    expect(await ws.commitAll("S1: change a", identity)).not.toBeNull();
    // Blueprint's own diffs: the patch and summary for the model and the pull request, the files a build changed.
    expect(await ws.diffSince(ws.baseSha)).toContain("+changed");
    expect(await ws.diffSummary(ws.baseSha)).toContain("src/a.txt");
    expect(
      await (
        await cache.sync({ cloneUrl: repo.url, ref: "refs/heads/main" })
      ).changedFiles(ws.baseSha, await ws.head()),
    ).toEqual(["src/a.txt"]);
    // Blueprint's git asked for a diff without those flags (as a later call might forget them).
    const gitDir = recordedGitDir(ws.dir) ?? "";
    const git = untrustedGit({ gitDir, workTree: ws.dir });
    for (const args of [
      ["diff", ws.baseSha, "HEAD"],
      ["log", "-p", "-1"],
      ["show", "HEAD"],
      ["diff", "--stat", ws.baseSha, "HEAD"],
    ]) {
      expect(await git.raw(args), args.join(" ")).toContain("src/a.txt");
    }
    expect(attack.loot()).toEqual([]);

    // Control: the same attributes and driver in a plain clone (no Blueprint attributes), with plain git.
    defineDriver(path.join(repo.seed, ".git"), attack.script);
    writeFileSync(path.join(repo.seed, "src", "a.txt"), "again\n");
    gitIn(repo.seed, ["diff"]);
    expect(attack.loot().length).toBeGreaterThan(0);
  });
});
