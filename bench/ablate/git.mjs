// Blueprint's git (untrusted-git.ts) against simple-git 4 with the same settings and environment and
// its `completion` option set to answer on exit at once: the wall time of a warm job's ten git calls on
// a worktree (six of them print nothing: a clean status, checkouts, ref updates, no untracked files).
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { simpleGit } from "simple-git";
import { HARDENED_CONFIG, untrustedGit } from "../../lib/workspace/untrusted-git.js";
import { interleaved, printRounds, verdict } from "./rounds.mjs";

const SEQUENCES = 10;

export async function run() {
  const scratch = mkdtempSync(path.join(os.tmpdir(), "blueprint-bench-ablate-git-"));
  try {
    const { repo, first, last } = fixture(scratch);
    const gitDir = path.join(repo, ".git");
    const home = path.join(scratch, "home");
    mkdirSync(home);
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      XDG_CONFIG_HOME: home,
      LC_ALL: "C",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_ATTR_NOSYSTEM: "1",
      GIT_TERMINAL_PROMPT: "0",
      GIT_DIR: gitDir,
      GIT_WORK_TREE: repo,
    };
    const simple = (completion) =>
      simpleGit({
        baseDir: repo,
        config: HARDENED_CONFIG,
        // simple-git 4 refuses GIT_* variables unless listed here.
        allowEnvironment: Object.keys(env),
        ...(completion ? { completion } : {}),
        unsafe: {
          allowUnsafeConfigPaths: true,
          allowUnsafeHooksPath: true,
          allowUnsafeFsMonitor: true,
          allowUnsafeCredentialHelper: true,
          allowUnsafeProtocolOverride: true,
        },
      }).env(env);
    const runners = {
      "ours (untrusted-git.ts)": untrustedGit({ gitDir, workTree: repo }),
      "simple-git, completion onExit 0": simple({ onExit: 0 }),
      "simple-git, defaults": simple(null),
    };
    const job = async (git) => {
      await git.raw(["rev-parse", "HEAD"]);
      await git.raw(["status", "--porcelain", "--untracked-files=all"]);
      await git.raw(["checkout", "--quiet", "--detach", first]);
      await git.raw(["checkout", "--quiet", "--detach", last]);
      await git.raw(["update-ref", "refs/blueprint/bench", last]);
      await git.raw(["rev-parse", "--verify", `${first}^{commit}`]);
      await git.raw(["show", "--no-textconv", `${last}:src/file-7.ts`]);
      await git.raw(["diff", "--no-ext-diff", "--name-only", first, last]);
      await git.raw(["ls-files", "-z", "--others", "--exclude-standard"]);
      await git.raw(["update-ref", "-d", "refs/blueprint/bench"]);
    };
    for (const git of Object.values(runners)) await job(git); // warm
    const results = await interleaved(Object.keys(runners), async (variant) => {
      const started = performance.now();
      for (let n = 0; n < SEQUENCES; n++) await job(runners[variant]);
      return (performance.now() - started) / SEQUENCES;
    });
    printRounds("a warm job's ten git calls", "ms", results);
    const [ours, onExit0, defaults] = Object.values(results);
    return [
      verdict("untrusted-git.ts vs simple-git { completion: { onExit: 0 } }", "ms", ours, onExit0, [
        "KEEP OURS",
        "USE SIMPLE-GIT",
      ]),
      verdict("  untrusted-git.ts vs simple-git defaults", "ms", ours, defaults),
    ];
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** A repository of 200 files over 20 commits; the first and last commits' ids. */
function fixture(scratch) {
  const repo = path.join(scratch, "repo");
  const git = (...args) =>
    execFileSync("git", args, {
      cwd: repo,
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
      encoding: "utf8",
    }).trim();
  mkdirSync(path.join(repo, "src"), { recursive: true });
  git("init", "--quiet", "-b", "main");
  git("config", "user.name", "Bench");
  git("config", "user.email", "bench@example.com");
  for (let commit = 0; commit < 20; commit++) {
    for (let file = 0; file < 200; file += commit === 0 ? 1 : 17)
      writeFileSync(path.join(repo, "src", `file-${file}.ts`), `export const value${file} = ${commit};\n`);
    git("add", "--all");
    git("commit", "--quiet", "-m", `commit ${commit}`);
  }
  return { repo, first: git("rev-list", "--max-parents=0", "HEAD"), last: git("rev-parse", "HEAD") };
}
