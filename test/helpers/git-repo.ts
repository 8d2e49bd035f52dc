import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { readBranch } from "../e2e/double/git-refs.js";
import { copyTemplate } from "./templates.js";

const IDENTITY = {
  GIT_AUTHOR_NAME: "Test Author",
  GIT_AUTHOR_EMAIL: "author@example.test",
  GIT_COMMITTER_NAME: "Test Author",
  GIT_COMMITTER_EMAIL: "author@example.test",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
};

/** git's stderr is captured: a failure throws with it in the message; an expected one prints nothing. */
export function gitIn(dir: string, args: string[], input?: string): string {
  return execFileSync("git", args, {
    cwd: dir,
    env: { ...process.env, ...IDENTITY },
    encoding: "utf8",
    input,
    stdio: ["pipe", "pipe", "pipe"],
  });
}

export function tempDir(prefix = "blueprint-test-"): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

export interface BareRepo {
  /** Path of the bare repository (the "remote"). */
  bare: string;
  /** file:// URL, as a webhook payload's clone_url would carry. */
  url: string;
  /** A working clone used to seed and later change the remote. */
  seed: string;
  head(branch?: string): string;
  /** Commits files to a branch of the remote (through the seed clone). */
  commit(files: Record<string, string>, message: string, branch?: string): string;
  log(branch: string): string[];
  show(branch: string, file: string): string;
}

/** A real bare repository with an initial commit on `main`, served over file://. */
export function createBareRepo(files: Record<string, string>): BareRepo {
  const root = tempDir();
  const seed = path.join(root, "seed");
  const bare = path.join(root, "remote.git");
  copySeededPair(files, root);
  const repo: BareRepo = {
    bare,
    url: `file://${bare}`,
    seed,
    // From the ref files; git (which fails for a missing branch) when they do not answer plainly.
    head: (branch = "main") => readBranch(bare, branch) ?? gitIn(bare, ["rev-parse", `refs/heads/${branch}`]).trim(),
    commit(changes, message, branch = "main") {
      gitIn(seed, ["fetch", "-q", "origin"]);
      const tracked = readBranch(path.join(seed, ".git"), branch, "refs/remotes/origin");
      const exists =
        tracked === undefined
          ? gitIn(seed, ["branch", "-r", "--list", `origin/${branch}`]).trim() !== ""
          : tracked !== null;
      gitIn(seed, ["checkout", "-q", "-B", branch, exists ? `origin/${branch}` : "origin/main"]);
      writeFiles(seed, changes);
      gitIn(seed, ["add", "-A"]);
      gitIn(seed, ["commit", "-q", "-m", message]);
      gitIn(seed, ["push", "-q", "origin", `HEAD:refs/heads/${branch}`]);
      return repo.head(branch);
    },
    log: (branch) =>
      gitIn(bare, ["log", "--format=%s", `refs/heads/${branch}`])
        .trim()
        .split("\n"),
    show: (branch, file) => gitIn(bare, ["show", `refs/heads/${branch}:${file}`]),
  };
  return repo;
}

/**
 * Each distinct set of files is made into a seed and its bare clone once per test process (seven git processes);
 * every repository is then a copy of that pair, with the paths its configuration records (the seed's origin, the
 * clone's source) moved to the copy, so what one test pushes no other test sees.
 */
function copySeededPair(files: Record<string, string>, root: string): void {
  const template = copyTemplate(
    JSON.stringify(["seeded", Object.entries(files).sort()]),
    (dir) => seedRepository(files, dir),
    root,
  );
  for (const config of [path.join(root, "seed", ".git", "config"), path.join(root, "remote.git", "config")])
    writeFileSync(config, readFileSync(config, "utf8").replaceAll(`${template}/`, `${root}/`));
}

function seedRepository(files: Record<string, string>, root: string): void {
  const seed = path.join(root, "seed");
  const bare = path.join(root, "remote.git");
  mkdirSync(seed);
  gitIn(seed, ["init", "-q", "-b", "main"]);
  writeFiles(seed, files);
  gitIn(seed, ["add", "-A"]);
  gitIn(seed, ["commit", "-q", "-m", "initial commit"]);
  gitIn(root, ["clone", "-q", "--bare", seed, bare]);
  gitIn(bare, ["config", "uploadpack.allowFilter", "true"]);
  gitIn(bare, ["config", "uploadpack.allowAnySHA1InWant", "true"]);
  gitIn(seed, ["remote", "add", "origin", bare]);
}

function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [file, content] of Object.entries(files)) {
    const target = path.join(dir, file);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, content);
  }
}
