import { execFile } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { HiddenCheck } from "./hidden-check.js";
import { fetchPackage, type NpmSource } from "./npm-tarball.js";
import type { EvalTask } from "./task-suite.js";

const run = promisify(execFile);

/**
 * The earlier version's top-level files a task's tree leaves out: release notes would give the change
 * away; CI and security-policy files say nothing about the code.
 */
const LEFT_OUT = [/^(history|changelog|changes)(\.\w+)?$/i, /^security\.md$/i, /^\.travis\.yml$/i];

/** What a smoke task is made of once its package's two versions are fetched (none of it is in this repository). */
export interface SmokeSources {
  /** The earlier version as published, unpacked in the cache: read it, never change it. */
  earlierDir: string;
  /** The files of it the task's repository starts with (paths in it): all but release notes and CI files. */
  startingFiles: string[];
  /** The later version as published, unpacked in the cache. */
  laterDir: string;
  /** The real change: the diff between the two versions of the files task.json names, as `git apply` takes it. */
  goldPatch: string;
  /** Our own check files, and the later version's test files the task names. */
  check: HiddenCheck;
}

/** Fetches (or finds in the cache) the task's two versions and derives its tree, gold patch and check. */
export async function smokeSources(task: EvalTask, npm: NpmSource): Promise<SmokeSources> {
  const { package: name, from, to, changedFiles, check } = task.meta;
  const [earlierDir, laterDir] = await Promise.all([fetchPackage(name, from, npm), fetchPackage(name, to, npm)]);
  const goldPatch = await diffFiles(earlierDir, laterDir, changedFiles);
  const unchanged = changedFiles.filter((file) => !goldPatch.includes(`diff --git a/${file} b/${file}\n`));
  if (unchanged.length > 0)
    throw new Error(
      `task ${task.id}: ${unchanged.join(", ")} ${unchanged.length === 1 ? "is" : "are"} the same in ${name}@${from} and @${to}, but task.json names ${unchanged.length === 1 ? "it" : "them"} among the changed files`,
    );
  const upstream = (check.upstream ?? []).map((file) => ({
    source: path.join(laterDir, file),
    name: path.basename(file),
  }));
  const missing = upstream
    .filter((file) => !existsSync(file.source))
    .map((file) => path.relative(laterDir, file.source));
  if (missing.length > 0)
    throw new Error(`task ${task.id}: ${name}@${to} has no ${missing.join(", ")} (check.upstream)`);
  const own = task.checkDir
    ? filesUnder(task.checkDir).map((file) => ({ source: path.join(task.checkDir ?? "", file), name: file }))
    : [];
  return {
    earlierDir,
    startingFiles: filesUnder(earlierDir).filter((file) => !LEFT_OUT.some((pattern) => pattern.test(file))),
    laterDir,
    goldPatch,
    check: { command: check.command, files: [...own, ...upstream] },
  };
}

/** The task's repository as it starts: the earlier version's files, written into `dir`. */
export function writeStartingTree(sources: SmokeSources, dir: string): void {
  for (const file of sources.startingFiles) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    copyFileSync(path.join(sources.earlierDir, file), path.join(dir, file));
  }
}

/** Applies the gold patch to a tree that is not (and is not inside) a git repository. */
export async function applyGoldPatch(sources: SmokeSources, tree: string): Promise<void> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), "blueprint-eval-gold-"));
  try {
    writeFileSync(path.join(scratch, "gold.patch"), sources.goldPatch);
    await run("git", ["apply", "--whitespace=nowarn", path.join(scratch, "gold.patch")], {
      cwd: tree,
      env: { ...process.env, GIT_CEILING_DIRECTORIES: path.dirname(tree) },
    });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** `git diff` of `files` between two folders, with `a/` and `b/` paths as in a repository's diff. */
async function diffFiles(before: string, after: string, files: string[]): Promise<string> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), "blueprint-eval-diff-"));
  try {
    for (const [from, side] of [
      [before, "a"],
      [after, "b"],
    ] as const) {
      mkdirSync(path.join(scratch, side));
      for (const file of files.filter((candidate) => existsSync(path.join(from, candidate)))) {
        mkdirSync(path.dirname(path.join(scratch, side, file)), { recursive: true });
        copyFileSync(path.join(from, file), path.join(scratch, side, file));
      }
    }
    // --no-prefix: the folders' own names, a/ and b/, are the prefixes. Exit status 1 means "they differ".
    const diff = await run(
      "git",
      ["diff", "--no-index", "--no-prefix", "--binary", "--no-color", "--no-ext-diff", "a", "b"],
      { cwd: scratch, maxBuffer: 64 * 1024 * 1024 },
    ).then(
      () => "",
      (error: { code?: number; stdout?: string; message: string }) => {
        if (error.code === 1 && typeof error.stdout === "string") return error.stdout;
        throw new Error(`git diff of ${before} and ${after} failed: ${error.message}`);
      },
    );
    return diff;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function filesUnder(dir: string, prefix = ""): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) =>
      entry.isDirectory()
        ? filesUnder(path.join(dir, entry.name), `${prefix}${entry.name}/`)
        : entry.isFile()
          ? [`${prefix}${entry.name}`]
          : [],
    );
}
