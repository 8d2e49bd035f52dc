import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  createCommandRunner,
  checkBubblewrap,
  scrubbedEnv,
  type CommandRunner,
} from "../../src/workspace/command-runner.js";
import { RepoCache } from "../../src/workspace/repo-cache.js";
import type { Workspace } from "../../src/workspace/workspace.js";
import { FAKE_SECRETS, plantAttack, plantSecrets, type Attack } from "../helpers/attack.js";
import { createBareRepo, tempDir, type BareRepo } from "../helpers/git-repo.js";

// Each route: the agent's commands prepare the attack (inside bubblewrap, or with the plain runner
// where BLUEPRINT_SANDBOX=none would put them), then Blueprint's own status/add/commit/diff/push run.
// The attack script must never run, and nothing it could take (secrets, the token header) may leak.
// A control at the end of each test shows the same trap does fire for plain git.

const identity = { name: "blueprint[bot]", email: "bot@example.test" };
const TOKEN = "ghs_faketoken0123456789leak-me";
const sandboxCheck = checkBubblewrap();
const bwrap = "path" in sandboxCheck ? sandboxCheck.path : null;
let restoreSecrets: () => void = () => undefined;
beforeAll(() => {
  restoreSecrets = plantSecrets();
});
afterAll(() => restoreSecrets());

const open: Workspace[] = [];
afterEach(async () => {
  for (const workspace of open.splice(0)) await workspace.dispose().catch(() => undefined);
});

interface Job {
  repo: BareRepo;
  cache: RepoCache;
  ws: Workspace;
  mirror: string;
  attack: Attack;
  /** The `.git` pointer as Blueprint wrote it. */
  pointer: string;
}

async function job(): Promise<Job> {
  const repo = createBareRepo({ "README.md": "# repo\n", "src/a.txt": "a\n" });
  const cache = new RepoCache(tempDir("blueprint-untrusted-"), { poolSize: 0 });
  const ws = await cache.prepare({ cloneUrl: repo.url, ref: "refs/heads/main" });
  open.push(ws);
  const attack = plantAttack(ws.dir);
  mkdirSync(path.join(ws.dir, "hooks"));
  for (const hook of [
    "pre-commit",
    "post-commit",
    "reference-transaction",
    "pre-push",
    "post-checkout",
    "fsmonitor-watchman",
  ]) {
    writeFileSync(path.join(ws.dir, "hooks", hook), `#!/bin/sh\nexec "${attack.script}" "$@"\n`, { mode: 0o755 });
  }
  return {
    repo,
    cache,
    ws,
    mirror: cache.mirrorPath(repo.url),
    attack,
    pointer: readFileSync(path.join(ws.dir, ".git"), "utf8"),
  };
}

/** A command the agent runs; throws (with its output) when it did not exit 0. */
async function agentRuns(runner: CommandRunner, ws: Workspace, command: string): Promise<string> {
  const result = await runner.run(command, { cwd: ws.dir });
  if (result.exitCode !== 0) throw new Error(`agent command failed (${result.exitCode}): ${result.output}`);
  return result.output;
}

/** Blueprint's own git work after a step: status, commit, diff, log, push. */
async function blueprintCommitsAndPushes(j: Job, subject: string): Promise<void> {
  writeFileSync(path.join(j.ws.dir, "src", "a.txt"), "changed by the step\n");
  expect(await j.ws.changes()).toContain("src/a.txt");
  expect(await j.ws.commitAll(subject, identity)).not.toBeNull();
  await j.ws.diffSummary(j.ws.baseSha);
  await j.ws.commitsBetween(j.ws.baseSha, "HEAD");
  await j.ws.push("blueprint/issue-1", TOKEN);
  expect(j.repo.log("blueprint/issue-1")[0]).toBe(subject);
}

/** Plain git in the worktree, started with the App's environment (as the old Blueprint's git was). */
function plainGit(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): void {
  execFileSync("git", args, {
    cwd,
    env: {
      PATH: process.env.PATH,
      GIT_CONFIG_NOSYSTEM: "1",
      HOME: tempDir("blueprint-plain-home-"),
      ...FAKE_SECRETS,
      ...env,
    },
    stdio: "ignore",
  });
}

function expectNothingRan(j: Job): void {
  expect(j.attack.loot()).toEqual([]);
  expect(readFileSync(path.join(j.ws.dir, ".git"), "utf8")).toBe(j.pointer);
}

/** No file under the work directory (mirror config included) holds the token. */
function expectNoTokenOnDisk(workdir: string): void {
  const grep = spawnSync(
    "grep",
    ["-rl", "-e", TOKEN, "-e", Buffer.from(`x-access-token:${TOKEN}`).toString("base64"), workdir],
    { encoding: "utf8" },
  );
  expect(grep.stdout.trim()).toBe("");
  expect(grep.status).toBe(1); // searched, nothing found
}

describe("Blueprint's git on a tree the agent touched", () => {
  it("the sandbox is available (CI installs bubblewrap; these tests must not run without it)", () => {
    expect(
      bwrap,
      "bubblewrap (bwrap) is missing or cannot start here: install it to run the sandbox tests",
    ).not.toBeNull();
  });

  it("(a) ignores a .git pointer rewritten to the agent's own git dir with fsmonitor and hooks", async () => {
    const j = await job();
    const sandboxed = createCommandRunner({ bwrapPath: bwrap });
    // From inside the sandbox the mirror's config is read-only: the direct route fails.
    const direct = await sandboxed.run(`git config core.fsmonitor "$PWD/evil.sh"; echo "exit=$?"`, { cwd: j.ws.dir });
    expect(direct.output).not.toContain("exit=0");
    // So the agent builds a git directory of its own and points the worktree at it.
    await agentRuns(
      sandboxed,
      j.ws,
      [
        "set -e",
        'git clone -q --bare --shared "$(git rev-parse --git-common-dir)" .evil',
        "git --git-dir=.evil config core.bare false",
        "git --git-dir=.evil update-ref --no-deref HEAD $(git rev-parse HEAD)",
        "git --git-dir=.evil --work-tree=. read-tree HEAD",
        'git --git-dir=.evil config core.fsmonitor "$PWD/evil.sh"',
        'git --git-dir=.evil config core.hooksPath "$PWD/hooks"',
        "printf 'gitdir: %s\\n' \"$PWD/.evil\" > .git",
      ].join("\n"),
    );
    expect(readFileSync(path.join(j.mirror, "config"), "utf8")).not.toContain("evil");

    await blueprintCommitsAndPushes(j, "S1: first step");
    expectNothingRan(j);
    expect(readdirSync(path.join(j.mirror, "worktrees"))).toHaveLength(1);

    // Control: plain git following the rewritten pointer runs the script as this process, secrets in reach.
    writeFileSync(path.join(j.ws.dir, ".git"), `gitdir: ${path.join(j.ws.dir, ".evil")}\n`);
    plainGit(j.ws.dir, ["status", "--porcelain"]);
    expect(j.attack.lootText()).toContain(FAKE_SECRETS.PRIVATE_KEY);
  });

  it("puts back a .git pointer replaced by a directory before Blueprint's git runs", async () => {
    const j = await job();
    rmSync(path.join(j.ws.dir, ".git"));
    mkdirSync(path.join(j.ws.dir, ".git", "hooks"), { recursive: true });
    await blueprintCommitsAndPushes(j, "S1: after the pointer was replaced");
    expect(statSync(path.join(j.ws.dir, ".git")).isFile()).toBe(true);
    expectNothingRan(j);
  });

  it("(b) runs no filter or textconv driver a workspace .gitattributes names, wherever it is defined", async () => {
    const j = await job();
    writeFileSync(path.join(j.ws.dir, ".gitattributes"), "* filter=evil diff=evil merge=evil\n");
    // Inside the sandbox: neither the repository's config nor a lasting global config can be written.
    const sandboxed = await createCommandRunner({ bwrapPath: bwrap }).run(
      `git config filter.evil.clean "$PWD/evil.sh"; git config --global filter.evil.clean "$PWD/evil.sh"; git config --global --list`,
      { cwd: j.ws.dir },
    );
    expect(sandboxed.output).toMatch(/Read-only file system|could not lock|Permission denied/);
    // Without the sandbox (BLUEPRINT_SANDBOX=none) the agent can write the mirror's config itself.
    const plain = createCommandRunner({ env: { ...scrubbedEnv(), HOME: tempDir("blueprint-app-home-") } });
    await agentRuns(
      plain,
      j.ws,
      [
        'git config filter.evil.clean "$PWD/evil.sh"',
        'git config filter.evil.smudge "$PWD/evil.sh"',
        "git config filter.evil.required true",
        'git config diff.evil.textconv "$PWD/evil.sh"',
      ].join(" && "),
    );
    expect(readFileSync(path.join(j.mirror, "config"), "utf8")).toContain("evil.sh");

    await blueprintCommitsAndPushes(j, "S1: with attributes");
    expect(j.repo.show("blueprint/issue-1", "src/a.txt")).toBe("changed by the step\n");
    expectNothingRan(j);

    // Control: without the mirror's own attributes, plain git runs the driver.
    rmSync(path.join(j.mirror, "info", "attributes"));
    writeFileSync(path.join(j.ws.dir, "src", "a.txt"), "again\n");
    plainGit(j.ws.dir, ["add", "--all"]);
    expect(j.attack.loot()).not.toEqual([]);
  });

  it("(c) ignores `git config --global` written by a command, and the sandbox keeps it from lasting", async () => {
    const j = await job();
    const appHome = tempDir("blueprint-app-home-");
    const settings = [
      'core.fsmonitor "$PWD/evil.sh"',
      'core.hooksPath "$PWD/hooks"',
      'filter.evil.clean "$PWD/evil.sh"',
      "filter.evil.required true",
    ];
    const setAll = settings.map((setting) => `git config --global ${setting}`).join(" && ");
    writeFileSync(path.join(j.ws.dir, ".gitattributes"), "* filter=evil\n");
    // Sandboxed: HOME is private to the command and gone afterwards.
    await agentRuns(createCommandRunner({ bwrapPath: bwrap, env: { ...scrubbedEnv(), HOME: appHome } }), j.ws, setAll);
    expect(existsSync(path.join(appHome, ".gitconfig"))).toBe(false);
    // Plain runner: the App user's own ~/.gitconfig gets the settings.
    await agentRuns(createCommandRunner({ env: { ...scrubbedEnv(), HOME: appHome } }), j.ws, setAll);
    expect(readFileSync(path.join(appHome, ".gitconfig"), "utf8")).toContain("evil.sh");

    await blueprintCommitsAndPushes(j, "S1: after a global config");
    expectNothingRan(j);

    // Control: plain git with that HOME runs the script.
    plainGit(j.ws.dir, ["status", "--porcelain"], { HOME: appHome });
    expect(j.attack.loot()).not.toEqual([]);
  });

  it("(f) shows the push token to no hook, credential helper or rewritten remote, and leaves it nowhere on disk", async () => {
    const j = await job();
    const elsewhere = createBareRepo({ "README.md": "# attacker\n" });
    // The plain runner (BLUEPRINT_SANDBOX=none) reaches the mirror's config through the real pointer.
    await agentRuns(
      createCommandRunner({ env: { ...scrubbedEnv(), HOME: tempDir("blueprint-app-home-") } }),
      j.ws,
      [
        'git config core.hooksPath "$PWD/hooks"',
        `git config credential.helper "!$PWD/evil.sh"`,
        `git config remote.origin.url "${elsewhere.url}"`,
        `git config remote.origin.pushurl "${elsewhere.url}"`,
        `git config --add include.path "$PWD/more.config"`,
      ].join(" && "),
    );
    writeFileSync(
      path.join(j.ws.dir, "more.config"),
      `[core]\n\tfsmonitor = ${j.attack.script}\n[credential]\n\thelper = !${j.attack.script}\n`,
    );

    await blueprintCommitsAndPushes(j, "S1: pushed");
    expectNothingRan(j);
    expect(
      spawnSync("git", [
        "--git-dir",
        elsewhere.bare,
        "rev-parse",
        "--verify",
        "--quiet",
        "refs/heads/blueprint/issue-1",
      ]).status,
    ).toBe(1);
    expectNoTokenOnDisk(j.cache.workdir);

    // Control: plain git's push from the worktree runs the pre-push hook.
    plainGit(j.ws.dir, ["push", "-q", "origin", "HEAD:refs/heads/control"]);
    expect(j.attack.loot()).not.toEqual([]);
  });
});
