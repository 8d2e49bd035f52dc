// Time to a ready workspace on a repository with a long history and large binaries, side by side:
// a full clone, a blobless clone, and RepoCache's per-repository mirror (first job, then later jobs).
// The fixture repository is generated once with `git fast-import` and cached under os.tmpdir().
// BENCH_BASELINE=<git ref> (e.g. `8747d3c^`): RepoCache from that ref's build too, the two in alternating rounds,
// each figure printed for both with after ÷ before and their spread (bench/workspace-pairs.mjs).
import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { RepoCache } from "../lib/workspace/repo-cache.js";
import { baselineRef, builtBaseline } from "./support/baseline.mjs";
import { repoCachePairs } from "./workspace-pairs.mjs";

/** Bump `version` whenever the fixture's shape changes, so the cached copy is rebuilt. */
const FIXTURE = {
  version: "1",
  commits: 3000,
  textFiles: 300,
  packages: 12,
  /** Random (incompressible) binaries; each is rewritten at the listed commits, so old versions stay in history. */
  largeFiles: [
    { path: "assets/model-a.bin", mib: 10, writtenAt: [50, 900, 1800, 2700] },
    { path: "assets/model-b.bin", mib: 12, writtenAt: [300, 1500, 2500] },
    { path: "assets/dataset.bin", mib: 14, writtenAt: [600, 2000, 2900] },
    { path: "assets/textures.bin", mib: 16, writtenAt: [1200] },
    { path: "vendor/toolchain.bin", mib: 20, writtenAt: [100] },
  ],
};
const RUNS = { full: 3, blobless: 3, cold: 3, warm: 5 };
const TARGET = 20;
const MIB = 1024 * 1024;
const REF = "refs/heads/main";

// No user or system git config, so the numbers do not depend on whoever runs the bench.
const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", GIT_TERMINAL_PROMPT: "0" };
const execGit = promisify(execFile);

async function git(cwd, args) {
  const { stdout } = await execGit("git", args, { cwd, env: GIT_ENV, maxBuffer: 64 * MIB });
  return stdout.trim();
}

/** Deterministic text content, so the history has the same shape on every machine. */
function prng(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function sourceLine(random) {
  const n = Math.floor(random() * 1e6);
  const kinds = [
    `export const setting${n} = ${Math.floor(random() * 1000)};`,
    `export function handle${n}(input: string): string { return input.trim() + "${n}"; }`,
    `// Keeps request ${n} within its budget before the next retry.`,
    `const cache${n} = new Map<string, number>();`,
  ];
  return kinds[Math.floor(random() * kinds.length)];
}

function sourcePath(index) {
  return `packages/pkg-${String(index % FIXTURE.packages).padStart(2, "0")}/src/module-${String(index).padStart(3, "0")}.ts`;
}

/** Runs `git fast-import` in a repository, feeding it through `feed(write, writeData)` with back-pressure. */
async function fastImport(repo, args, feed) {
  const importer = spawn("git", ["fast-import", "--quiet", "--done", ...args], {
    cwd: repo,
    env: GIT_ENV,
    stdio: ["pipe", "inherit", "inherit"],
  });
  const exited = once(importer, "exit");
  const write = async (chunk) => {
    if (!importer.stdin.write(chunk)) await once(importer.stdin, "drain");
  };
  const writeData = async (content) => {
    const bytes = typeof content === "string" ? Buffer.from(content) : content;
    await write(`data ${bytes.length}\n`);
    await write(bytes);
    await write("\n");
  };
  try {
    await feed(write, writeData);
  } catch (error) {
    importer.kill();
    await exited;
    throw error;
  }
  importer.stdin.end("done\n");
  const [code] = await exited;
  if (code !== 0) throw new Error(`git fast-import exited with ${code}`);
}

/** Writes the whole history: every source file in the first commit, then a few edits per commit. */
function importHistory(repo) {
  return fastImport(repo, ["--big-file-threshold=1m"], async (write, writeData) => {
    const random = prng(42);
    const files = Array.from({ length: FIXTURE.textFiles }, (_, i) => ({
      path: sourcePath(i),
      lines: Array.from({ length: 40 + Math.floor(random() * 160) }, () => sourceLine(random)),
    }));
    for (let commit = 0; commit < FIXTURE.commits; commit++) {
      const touched =
        commit === 0
          ? files
          : Array.from({ length: 1 + Math.floor(random() * 4) }, () => files[Math.floor(random() * files.length)]);
      for (const file of commit === 0 ? [] : touched) {
        for (let edit = 1 + Math.floor(random() * 5); edit > 0; edit--) {
          const at = Math.floor(random() * (file.lines.length + 1));
          if (random() < 0.7) file.lines.splice(at, 1, sourceLine(random));
          else file.lines.splice(at, 0, sourceLine(random));
        }
      }
      await write(`commit ${REF}\ncommitter Bench <bench@example.com> ${1_600_000_000 + commit * 3600} +0000\n`);
      await writeData(`Change ${commit}\n`);
      for (const file of new Set(touched)) {
        await write(`M 100644 inline ${file.path}\n`);
        await writeData(`${file.lines.join("\n")}\n`);
      }
      for (const large of FIXTURE.largeFiles.filter((l) => l.writtenAt.includes(commit))) {
        await write(`M 100644 inline ${large.path}\n`);
        await writeData(randomBytes(large.mib * MIB));
      }
    }
  });
}

/** The bare fixture repository, built once per FIXTURE.version; returns its path. */
async function fixtureRepository() {
  const prefix = "blueprint-bench-workspace-fixture-";
  const dir = path.join(os.tmpdir(), `${prefix}v${FIXTURE.version}`);
  if (
    await fs.stat(path.join(dir, "complete")).then(
      () => true,
      () => false,
    )
  )
    return path.join(dir, "repo.git");

  for (const entry of await fs.readdir(os.tmpdir())) {
    if (entry.startsWith(prefix)) await fs.rm(path.join(os.tmpdir(), entry), { recursive: true, force: true });
  }
  const started = performance.now();
  process.stdout.write(`building the fixture repository (once, cached in ${dir}) … `);
  const building = await fs.mkdtemp(path.join(os.tmpdir(), `${prefix}building-`));
  const repo = path.join(building, "repo.git");
  await git(building, ["init", "--quiet", "--bare", "--initial-branch=main", repo]);
  await importHistory(repo);
  // Pack like a hosting server would: one pack with good deltas for text and a reachability bitmap;
  // large binaries are stored whole (core.bigFileThreshold), as git does for big files.
  await git(repo, ["-c", "core.bigFileThreshold=1m", "repack", "-a", "-d", "-f", "-b", "--quiet"]);
  await fs.writeFile(path.join(building, "complete"), new Date().toISOString());
  await fs.rename(building, dir);
  console.log(`${seconds(performance.now() - started)}`);
  return path.join(dir, "repo.git");
}

/** A throwaway remote sharing the fixture's objects, so pushes during the run leave the fixture as it was. */
async function remoteFor(fixture, runDir) {
  const remote = path.join(runDir, "remote.git");
  await git(runDir, ["clone", "--quiet", "--bare", "--shared", fixture, remote]);
  await git(remote, ["config", "uploadpack.allowFilter", "true"]);
  await git(remote, ["config", "uploadpack.allowAnySHA1InWant", "true"]);
  return remote;
}

/** Someone pushes: a new commit on main editing a few source files. */
async function pushCommit(remote, n) {
  const edits = [];
  for (const index of [n * 7, n * 7 + 1, n * 7 + 2]) {
    const file = sourcePath(index % FIXTURE.textFiles);
    edits.push({
      file,
      content: `${await git(remote, ["cat-file", "blob", `${REF}:${file}`])}\nexport const pushed${n} = ${n};\n`,
    });
  }
  await fastImport(remote, [], async (write, writeData) => {
    await write(`commit ${REF}\ncommitter Bench <bench@example.com> ${1_700_000_000 + n} +0000\n`);
    await writeData(`Pushed ${n}\n`);
    await write(`from ${REF}^0\n`);
    for (const edit of edits) {
      await write(`M 100644 inline ${edit.file}\n`);
      await writeData(edit.content);
    }
  });
  return git(remote, ["rev-parse", REF]);
}

/** Fails loudly if a "ready" workspace is not: wrong commit, or large files missing or truncated. */
async function assertReady(dir, sha) {
  const head = await git(dir, ["rev-parse", "HEAD"]);
  if (head !== sha) throw new Error(`workspace ${dir} is at ${head}, expected ${sha}`);
  for (const large of FIXTURE.largeFiles) {
    const { size } = await fs.stat(path.join(dir, large.path));
    if (size !== large.mib * MIB) throw new Error(`${large.path} is ${size} bytes in ${dir}`);
  }
}

async function timed(work) {
  const started = performance.now();
  const result = await work();
  return { ms: performance.now() - started, result };
}

function seconds(ms) {
  return ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${(ms / 1000).toFixed(2)} s`;
}

function summary(times) {
  const sorted = [...times].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median, min: sorted[0], runs: sorted.length };
}

async function directorySize(dir) {
  let total = 0;
  for (const entry of await fs.readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) total += (await fs.stat(path.join(entry.parentPath ?? entry.path, entry.name))).size;
  }
  return total;
}

export async function run() {
  const ref = baselineRef();
  const baseline = ref ? await builtBaseline(ref) : null;
  const fixture = await fixtureRepository();
  const runDir = await fs.mkdtemp(path.join(os.tmpdir(), "blueprint-bench-workspace-run-"));
  try {
    const remote = await remoteFor(fixture, runDir);
    const url = `file://${remote}`;
    let sha = await git(remote, ["rev-parse", REF]);
    const commits = await git(remote, ["rev-list", "--count", REF]);
    const packed = await directorySize(path.join(fixture, "objects", "pack"));
    const checkedOut = FIXTURE.largeFiles.reduce((sum, l) => sum + l.mib * MIB, 0);
    console.log(
      `fixture: ${commits} commits, ${FIXTURE.textFiles} source files + ${FIXTURE.largeFiles.length} binaries ` +
        `(${(checkedOut / MIB).toFixed(0)} MiB at HEAD, ${(packed / MIB).toFixed(0)} MiB packed history), served as file:// with filters allowed`,
    );
    // Clones here are disk- and CPU-bound: other work on the machine shows up in the numbers.
    console.log(`machine: ${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(1)} at start`);
    const results = await cloneTimes(runDir, url, sha);
    if (baseline) {
      const context = { baseline, runDir, url, remote, sha, full: results[0].median, runs: RUNS };
      return await repoCachePairs({ ...context, timed, assertReady, pushCommit, seconds });
    }

    // The first job on a repository: a fresh cache each time.
    let cache;
    const cold = [];
    for (let i = 0; i < RUNS.cold; i++) {
      if (cache) await fs.rm(cache.workdir, { recursive: true, force: true });
      cache = new RepoCache(path.join(runDir, `cache-${i}`));
      const { ms, result: workspace } = await timed(() => cache.prepare({ cloneUrl: url, ref: REF, token: null }));
      cold.push(ms);
      await assertReady(workspace.dir, sha);
      await workspace.dispose();
    }
    results.push({ label: "RepoCache.prepare, cold (first job)", ...summary(cold) });

    // Later jobs on the same repository, with the remote unchanged, then with a push before each job.
    for (const variant of [
      { label: "RepoCache.prepare, warm (no new commits)", push: false },
      { label: "RepoCache.prepare, warm (after a push)", push: true },
    ]) {
      const times = [];
      for (let i = 0; i < RUNS.warm; i++) {
        if (variant.push) sha = await pushCommit(remote, i);
        const { ms, result: workspace } = await timed(() => cache.prepare({ cloneUrl: url, ref: REF, token: null }));
        times.push(ms);
        await assertReady(workspace.dir, sha);
        await workspace.dispose();
      }
      results.push({ label: variant.label, ...summary(times) });
    }

    printTable(results);
  } finally {
    await fs.rm(runDir, { recursive: true, force: true });
  }
}

/** A full clone's and a blobless clone's times to a ready workspace. */
async function cloneTimes(runDir, url, sha) {
  const results = [];
  const clones = [
    { label: "full clone", runs: RUNS.full, args: [] },
    { label: "blobless clone (--filter=blob:none)", runs: RUNS.blobless, args: ["--filter=blob:none"] },
  ];
  for (const clone of clones) {
    const times = [];
    for (let i = 0; i < clone.runs; i++) {
      const dir = path.join(runDir, "clone");
      // `git clone` checks out HEAD (main): that is the ready workspace.
      times.push((await timed(() => git(runDir, ["clone", "--quiet", "--no-local", ...clone.args, url, dir]))).ms);
      await assertReady(dir, sha);
      await fs.rm(dir, { recursive: true, force: true });
    }
    results.push({ label: clone.label, ...summary(times) });
  }
  return results;
}

function printTable(results) {
  const width = Math.max(...results.map((r) => r.label.length));
  console.log(`\n  ${"workspace from".padEnd(width)}    median       min  runs`);
  for (const r of results) {
    console.log(
      `  ${r.label.padEnd(width)}  ${seconds(r.median).padStart(8)}  ${seconds(r.min).padStart(8)}  ${String(r.runs).padStart(4)}`,
    );
  }
  const full = results[0].median;
  const [upToDate, afterPush] = results.slice(-2);
  const ratio = full / afterPush.median;
  console.log(`\n  full / warm (no new commits) = ${(full / upToDate.median).toFixed(1)}×`);
  console.log(
    `  full / warm (after a push)   = ${ratio.toFixed(1)}× (target ≥ ${TARGET}×: ${ratio >= TARGET ? "met" : "NOT met"})`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
