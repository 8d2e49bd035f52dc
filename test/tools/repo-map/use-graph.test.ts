import { describe, expect, it } from "vitest";
import type { RepoFile } from "../../../src/tools/repo-map/collect-tags.js";
import { focusTerms, noMentions } from "../../../src/tools/repo-map/focus.js";
import { rankDefinitions } from "../../../src/tools/repo-map/rank.js";
import { forgetUseGraph, useGraph, type UseGraph } from "../../../src/tools/repo-map/use-graph.js";
import { normaliseTags } from "../../../src/tools/repo-map/tags.js";

/** A small deterministic generator, so a failure names a seed that reproduces it. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const NAMES = [
  "parseRetryAfter",
  "run",
  "get",
  "_private",
  "shared",
  "buildMap",
  "RepoFile",
  "x",
  "tokenCount",
  "renderLines",
  "Query",
  "load",
];

function randomFile(path: string, next: () => number): RepoFile {
  const definitions = NAMES.filter(() => next() < 0.15).map((name, index) => ({
    name,
    kind: "function",
    line: index + 1,
    signature: `function ${name}() {`,
  }));
  const counts = new Map<string, number>();
  for (const name of NAMES) if (next() < 0.3) counts.set(name, 1 + Math.floor(next() * 4));
  const file: RepoFile = { path, tags: normaliseTags("parser", definitions, counts, 40) };
  if (next() < 0.1) file.large = true;
  return file;
}

function plain(graph: UseGraph) {
  return {
    sources: [...graph.sources],
    targets: [...graph.targets],
    weights: [...graph.weights],
    nameIds: [...graph.nameIds],
    names: graph.names,
    singleDefiner: graph.singleDefiner,
  };
}

describe("repo_map's use graph", () => {
  it("patched after one-file changes equals a graph built afresh (random changes)", () => {
    for (let seed = 1; seed <= 30; seed++) {
      const next = random(seed);
      const files = Array.from({ length: 25 }, (_, index) => randomFile(`src/f${index}.ts`, next));
      forgetUseGraph();
      useGraph(files, noMentions());
      for (let step = 0; step < 10; step++) {
        const changed = Math.floor(next() * files.length);
        files[changed] = next() < 0.2 ? { path: `src/f${changed}.ts` } : randomFile(`src/f${changed}.ts`, next);
        const patched = plain(useGraph(files, noMentions()));
        forgetUseGraph();
        const fresh = plain(useGraph(files, noMentions()));
        expect(patched, `seed ${seed}, step ${step}`).toEqual(fresh);
      }
    }
  });

  it("patched again and again (each patch from the last) still equals a graph built afresh", () => {
    for (let seed = 31; seed <= 60; seed++) {
      const next = random(seed);
      const files = Array.from({ length: 25 }, (_, index) => randomFile(`src/f${index}.ts`, next));
      forgetUseGraph();
      useGraph(files, noMentions());
      for (let step = 0; step < 10; step++) {
        const changed = Math.floor(next() * files.length);
        files[changed] = randomFile(`src/f${changed}.ts`, next);
        useGraph(files, noMentions());
      }
      const patched = plain(useGraph(files, noMentions()));
      forgetUseGraph();
      expect(patched, `seed ${seed}`).toEqual(plain(useGraph(files, noMentions())));
    }
  });

  it("the best items of a bounded ranking are the prefix of the full ranking", () => {
    const next = random(7);
    const files = Array.from({ length: 60 }, (_, index) => randomFile(`src/dir${index % 4}/f${index}.ts`, next));
    for (const focus of [undefined, "shared", "src/dir2"]) {
      const full = rankDefinitions(files, focusTerms(focus), noMentions()).items;
      for (const limit of [0, 1, 5, 37, full.length + 3]) {
        const bounded = rankDefinitions(files, focusTerms(focus), noMentions(), limit).items;
        expect(bounded).toEqual(full.slice(0, limit));
      }
    }
  });
});
