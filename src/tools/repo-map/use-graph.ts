import type { RepoFile } from "./collect-tags.js";
import type { Mentions } from "./focus.js";
import type { WeightedEdges } from "./pagerank.js";

/** A name defined in more files than this points nowhere in particular (`get`, `run`): it adds no edges. */
const MAX_DEFINERS = 16;
/** Files over the read limit are usually generated or vendored: what they define counts less. */
const LARGE_FILE_WEIGHT = 0.1;

/** Edges from a file using a name to each file defining it, with the name's id for sharing ranks out to definitions. */
export interface UseGraph extends WeightedEdges {
  nameIds: number[];
  names: string[];
  /** Per name id: whether one file alone defines it (then every edge of the name ends there). */
  singleDefiner: boolean[];
}

/**
 * How much one use of `name` says about the file defining it. Rare names (used by few files) and
 * longer, structured ones (`parseRetryAfter`) are specific; short ones, private ones (`_x`) and
 * names defined in many files (`run`, `get`) say little. The weight is split between a name's definers.
 */
export function identifierWeight(name: string, definers: number, referencers: number, totalFiles: number, mentioned: boolean): number {
  let weight = mentioned ? 10 : 1;
  if (name.length >= 8 && /[a-z][A-Z]|[A-Za-z]_[A-Za-z]/.test(name)) weight *= 4;
  else if (name.length <= 3) weight *= 0.3;
  if (name.startsWith("_") || name.startsWith("#")) weight *= 0.1;
  if (definers > 5) weight *= 0.1;
  // Inverse document frequency, scaled to (0, 1]: a name every file uses points nowhere in particular.
  if (totalFiles > 1) weight *= Math.log(1 + totalFiles / Math.max(1, referencers)) / Math.log(1 + totalFiles);
  return weight / definers;
}

/** The last graph built: a model calls repo_map several times on one tree (with other focus), and the graph does not depend on the focus. */
let last: { files: Array<Pick<RepoFile, "path" | "tags" | "large">>; mentioned: string; graph: UseGraph } | undefined;

export function useGraph(files: RepoFile[], mentions: Mentions): UseGraph {
  const mentioned = [...mentions.identifiers].sort().join("\0");
  const previous = last;
  if (
    previous &&
    previous.mentioned === mentioned &&
    previous.files.length === files.length &&
    files.every((file, index) => {
      const before = previous.files[index];
      // Tags come from the blob-keyed cache: the same object means the same content.
      return before !== undefined && before.path === file.path && before.tags === file.tags && before.large === file.large;
    })
  ) {
    return previous.graph;
  }
  const graph = buildGraph(files, mentions);
  last = { files: files.map(({ path, tags, large }) => ({ path, tags, large })), mentioned, graph };
  return graph;
}

function buildGraph(files: RepoFile[], mentions: Mentions): UseGraph {
  const definers = new Map<string, number[]>();
  files.forEach((file, index) => {
    for (const definition of file.tags?.definitions ?? []) {
      const list = definers.get(definition.name);
      if (!list) definers.set(definition.name, [index]);
      else if (list[list.length - 1] !== index) list.push(index);
    }
  });
  const referencers = new Map<string, number>();
  for (const file of files) for (const [name] of file.tags?.references ?? []) if (definers.has(name)) referencers.set(name, (referencers.get(name) ?? 0) + 1);

  const names: string[] = [];
  const singleDefiner: boolean[] = [];
  const nameInfo = new Map<string, { id: number; weight: number; targets: number[] }>();
  for (const [name, targets] of definers) {
    if (targets.length > MAX_DEFINERS || !referencers.has(name)) continue;
    const weight = identifierWeight(name, targets.length, referencers.get(name) ?? 0, files.length, mentions.identifiers.has(name));
    nameInfo.set(name, { id: names.length, weight, targets });
    names.push(name);
    singleDefiner.push(targets.length === 1);
  }

  const sources: number[] = [];
  const targets: number[] = [];
  const weights: number[] = [];
  const nameIds: number[] = [];
  files.forEach((file, from) => {
    for (const [name, uses] of file.tags?.references ?? []) {
      const info = nameInfo.get(name);
      // A file that defines the name itself means its own definition.
      if (!info || info.targets.includes(from)) continue;
      const weight = info.weight * Math.sqrt(uses);
      for (const to of info.targets) {
        sources.push(from);
        targets.push(to);
        weights.push(files[to]?.large ? weight * LARGE_FILE_WEIGHT : weight);
        nameIds.push(info.id);
      }
    }
  });
  return { sources, targets, weights, nameIds, names, singleDefiner, count: sources.length };
}
