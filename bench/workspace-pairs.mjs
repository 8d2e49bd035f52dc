// BENCH_BASELINE=<git ref> for the workspace bench (bench/workspace.mjs): RepoCache from the baseline's build
// (bench/support/baseline.mjs, imported from its lib/) and from this checkout's lib/, on the same fixture and remote,
// in alternating rounds (the order flipped every round): each round makes a fresh cache for both (cold), then lets
// both prepare again (warm, no new commits), then pushes one commit and lets both prepare (warm, after a push).
// It prints each figure for both builds, after ÷ before on the medians and each build's spread, and the bench's
// headline ratio (full clone ÷ warm after a push) for both; the clones are measured once, as they use no build.
import { promises as fs } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { RepoCache } from "../lib/workspace/repo-cache.js";
import { median } from "./ablate/rounds.mjs";
import { orderOf, PAIR_HEADER, pairRows } from "./support/pairs.mjs";

/**
 * `context`: baseline (builtBaseline's), runDir, url and remote (the fixture's throwaway copy), sha (its head), full
 * (the full clone's median, ms), runs ({ cold, warm }: rounds), and workspace.mjs's timed, assertReady, pushCommit
 * and seconds.
 */
export async function repoCachePairs(context) {
  const { baseline, runs } = context;
  const modulePath = path.join(baseline.root, "lib", "workspace", "repo-cache.js");
  const builds = { baseline: (await import(pathToFileURL(modulePath).href)).RepoCache, current: RepoCache };
  const figures = { cold: pair(), warm: pair(), pushed: pair() };
  const caches = {};
  let sha = context.sha;
  for (let round = 0; round < runs.cold; round++) {
    for (const build of orderOf(round)) {
      if (caches[build]) await fs.rm(caches[build].workdir, { recursive: true, force: true });
      caches[build] = new builds[build](path.join(context.runDir, `cache-${build}-${round}`));
      figures.cold[build].push(await prepare(context, caches[build], sha));
    }
  }
  for (let round = 0; round < runs.warm; round++)
    for (const build of orderOf(round)) figures.warm[build].push(await prepare(context, caches[build], sha));
  for (let round = 0; round < runs.warm; round++) {
    sha = await context.pushCommit(context.remote, round);
    for (const build of orderOf(round)) figures.pushed[build].push(await prepare(context, caches[build], sha));
  }
  printPairs(context, figures);
}

const pair = () => ({ baseline: [], current: [] });

/** One RepoCache.prepare, timed (ms), its workspace checked and disposed of. */
async function prepare(context, cache, sha) {
  const { ms, result: workspace } = await context.timed(() =>
    cache.prepare({ cloneUrl: context.url, ref: "refs/heads/main", token: null }),
  );
  await context.assertReady(workspace.dir, sha);
  await workspace.dispose();
  return ms;
}

function printPairs(context, figures) {
  const { baseline, full, seconds } = context;
  const labels = {
    cold: "RepoCache.prepare, cold (first job)",
    warm: "RepoCache.prepare, warm (no new commits)",
    pushed: "RepoCache.prepare, warm (after a push)",
  };
  const rows = Object.entries(labels).map(([key, name]) => ({
    name,
    unit: "ms",
    before: figures[key].baseline,
    after: figures[key].current,
  }));
  console.log(`\n  baseline ${baseline.label} against current, same run; full clone ${seconds(full)} (median)\n`);
  const table = [PAIR_HEADER, ...pairRows(rows)];
  const widths = PAIR_HEADER.map((_, i) => Math.max(...table.map((row) => [...row[i]].length)));
  for (const row of table)
    console.log(
      `  ${row
        .map((cell, i) => cell.padEnd(widths[i]))
        .join("  ")
        .trimEnd()}`,
    );
  const ratio = (build) => (full / median(figures.pushed[build])).toFixed(1);
  console.log(`\n  full / warm (after a push): baseline ${ratio("baseline")}×, current ${ratio("current")}×`);
  console.log(
    `  ${context.runs.cold} cold and ${context.runs.warm} warm rounds of each build, alternating; ` +
      "spread: a build's largest run minus its smallest, over their median; a ratio further from 1 than the larger " +
      "spread is called beyond spread.",
  );
}
