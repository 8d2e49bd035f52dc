// BENCH_BASELINE=<git ref>: the build a bench compares this checkout's against, in the same run (same-run pairs).
// The ref is checked out in a git worktree in a temp dir (`git worktree add --detach`), installed
// (`npm ci --prefer-offline --ignore-scripts`) and compiled (its own `tsc -p tsconfig.json`); the worktree is then
// unregistered (its `.git` file removed, the directory renamed, `git worktree prune`) and the built copy kept under
// os.tmpdir() as blueprint-bench-baseline-<commit>, so a second run with the same commit reuses it. Delete that
// directory to build it afresh. Used by bench/workspace.mjs (its RepoCache) and bench/load/ (its processes).
import { execFile } from "node:child_process";
import { existsSync, promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const PROJECT_ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PREFIX = "blueprint-bench-baseline-";

/** Rounds per build where a bench runs them (BENCH_BASELINE_ROUNDS, default 2; the load bench): each round runs both. */
export const BASELINE_ROUNDS = Math.max(1, Math.floor(Number(process.env.BENCH_BASELINE_ROUNDS)) || 2);

/** The ref BENCH_BASELINE names, or null when it is unset or empty (the benches then run this checkout alone). */
export function baselineRef() {
  const ref = (process.env.BENCH_BASELINE ?? "").trim();
  return ref === "" ? null : ref;
}

/** The baseline built (or found built) for `ref`: its commit, its directory, and a label for tables. */
export async function builtBaseline(ref) {
  const { stdout } = await run("git", ["rev-parse", "--verify", `${ref}^{commit}`], { cwd: PROJECT_ROOT });
  const commit = stdout.trim();
  const root = path.join(os.tmpdir(), `${PREFIX}${commit}`);
  const label = `${ref} (${commit.slice(0, 7)})`;
  if (existsSync(path.join(root, "built")) && existsSync(path.join(root, "lib", "index.js"))) {
    console.log(`baseline ${label}: built before, in ${root}`);
    return { ref, commit, root, label };
  }
  const started = Date.now();
  process.stdout.write(`baseline ${label}: checking out, installing and compiling it (once, kept in ${root}) … `);
  await build(commit, root);
  console.log(`${((Date.now() - started) / 1000).toFixed(0)} s`);
  return { ref, commit, root, label };
}

/** Checks `commit` out in a worktree, installs and compiles it there, and moves the result to `root`. */
async function build(commit, root) {
  const building = await fs.mkdtemp(path.join(os.tmpdir(), `${PREFIX}building-`));
  const tree = path.join(building, "tree");
  try {
    await run("git", ["worktree", "add", "--detach", "--quiet", tree, commit], { cwd: PROJECT_ROOT });
    await step(tree, "npm", ["ci", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts"]);
    await step(tree, process.execPath, [
      path.join(tree, "node_modules", "typescript", "bin", "tsc"),
      "-p",
      "tsconfig.json",
    ]);
    await fs.writeFile(path.join(tree, "built"), `${commit}\n${new Date().toISOString()}\n`);
    // No longer a worktree: a plain copy of the built commit, which the prune below unregisters.
    await fs.rm(path.join(tree, ".git"), { force: true });
    await fs.rm(root, { recursive: true, force: true });
    await fs.rename(tree, root);
  } finally {
    if (existsSync(path.join(tree, ".git")))
      await run("git", ["worktree", "remove", "--force", tree], { cwd: PROJECT_ROOT }).catch(() => undefined);
    await fs.rm(building, { recursive: true, force: true });
    await run("git", ["worktree", "prune"], { cwd: PROJECT_ROOT }).catch(() => undefined);
  }
}

/** Runs one build step in `cwd`, its output kept and shown only if it fails. */
async function step(cwd, command, args) {
  try {
    await run(command, args, {
      cwd,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, npm_config_loglevel: "warn" },
    });
  } catch (error) {
    const output = `${error.stdout ?? ""}${error.stderr ?? ""}`.trim().split("\n").slice(-30).join("\n");
    throw new Error(
      `building the baseline: \`${path.basename(command)} ${args.join(" ")}\` failed in ${cwd}:\n${output}`,
    );
  }
}
