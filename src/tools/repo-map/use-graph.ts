import type { RepoFile } from "./collect-tags.js";
import type { Mentions } from "./focus.js";
import type { WeightedEdges } from "./pagerank.js";
import { insertSorted, lowerBound, removeSorted } from "./sorted-numbers.js";

/** A name defined in more files than this points nowhere in particular (`get`, `run`): it adds no edges. */
const MAX_DEFINERS = 16;
/** Files over the read limit are usually generated or vendored: what they define counts less. */
const LARGE_FILE_WEIGHT = 0.1;
/** More changed files than this since the last graph: build it afresh rather than patch it. */
const MAX_PATCHED_FILES = 64;

/**
 * Edges from a file using a name to each file defining it, with the name's id for sharing ranks
 * out to definitions. Edges come grouped by name (names in code-point order), then by the using
 * file, then by the defining file: an order that does not depend on how the graph was reached.
 */
export interface UseGraph extends WeightedEdges {
  sources: Int32Array;
  targets: Int32Array;
  weights: Float64Array;
  nameIds: Int32Array;
  names: string[];
  /** Per name id: whether one file alone defines it (then every edge of the name ends there). */
  singleDefiner: boolean[];
}

/**
 * How much one use of `name` says about the file defining it. Rare names (used by few files) and
 * longer, structured ones (`parseRetryAfter`) are specific; short ones, private ones (`_x`) and
 * names defined in many files (`run`, `get`) say little. The weight is split between a name's definers.
 */
export function identifierWeight(
  name: string,
  definers: number,
  referencers: number,
  totalFiles: number,
  mentioned: boolean,
): number {
  let weight = mentioned ? 10 : 1;
  if (name.length >= 8 && /[a-z][A-Z]|[A-Za-z]_[A-Za-z]/.test(name)) weight *= 4;
  else if (name.length <= 3) weight *= 0.3;
  if (name.startsWith("_") || name.startsWith("#")) weight *= 0.1;
  if (definers > 5) weight *= 0.1;
  // Inverse document frequency, scaled to (0, 1]: a name every file uses points nowhere in particular.
  if (totalFiles > 1) weight *= Math.log(1 + totalFiles / Math.max(1, referencers)) / Math.log(1 + totalFiles);
  return weight / definers;
}

type FileView = Pick<RepoFile, "path" | "tags" | "large">;

/**
 * One name's edges, kept so that a changed file re-derives only the names it defines or uses. Typed arrays: the whole
 * graph is copied out of them after each change.
 */
interface NameEdges {
  sources: Int32Array;
  targets: Int32Array;
  weights: Float64Array;
  singleDefiner: boolean;
}

/** Who defines and who uses each name (file indices ascending), and the edges that follow. */
interface GraphIndex {
  files: FileView[];
  mentioned: string;
  definers: Map<string, number[]>;
  users: Map<string, { files: number[]; uses: number[] }>;
  edges: Map<string, NameEdges>;
  /** Names with edges, in code-point order. */
  names: string[];
  graph: UseGraph;
  /** Where each name's edges start in the graph's arrays (by name id; one more for the end). */
  offsets: Int32Array;
}

/** The last graph: a model calls repo_map several times on one tree, and after a push few files change. */
let last: GraphIndex | undefined;

/**
 * The use graph of these files. Patched from the last one when only a few files' tags changed; equal to a fresh build
 * either way.
 */
export function useGraph(files: RepoFile[], mentions: Mentions): UseGraph {
  const mentioned = [...mentions.identifiers].sort().join("\0");
  const previous = last;
  const changed = previous && previous.mentioned === mentioned ? changedFiles(previous.files, files) : undefined;
  if (previous && changed && changed.length === 0) return previous.graph;
  const index =
    previous && changed && changed.length <= MAX_PATCHED_FILES
      ? patch(previous, files, changed, mentions)
      : build(files, mentions, mentioned);
  last = index;
  return index.graph;
}

/** Forgets the last graph (tests compare a patched graph with a fresh one). */
export function forgetUseGraph(): void {
  last = undefined;
}

/** Indices of files whose tags changed, or undefined when the file list itself changed. */
function changedFiles(before: FileView[], files: RepoFile[]): number[] | undefined {
  if (before.length !== files.length) return undefined;
  const changed: number[] = [];
  for (let i = 0; i < files.length; i++) {
    const was = before[i];
    const now = files[i];
    if (!was || !now || was.path !== now.path) return undefined;
    // Tags come from the blob-keyed cache: the same object means the same content.
    if (was.tags !== now.tags || was.large !== now.large) changed.push(i);
  }
  return changed;
}

function snapshot(files: RepoFile[]): FileView[] {
  return files.map(({ path, tags, large }) => ({ path, tags, large }));
}

function build(files: RepoFile[], mentions: Mentions, mentioned: string): GraphIndex {
  const definers = new Map<string, number[]>();
  const users = new Map<string, { files: number[]; uses: number[] }>();
  files.forEach((file, index) => {
    for (const definition of file.tags?.definitions ?? []) {
      const list = definers.get(definition.name);
      if (!list) definers.set(definition.name, [index]);
      else if (list[list.length - 1] !== index) list.push(index);
    }
    for (const [name, uses] of file.tags?.references ?? []) {
      const entry = users.get(name);
      if (!entry) users.set(name, { files: [index], uses: [uses] });
      else {
        entry.files.push(index);
        entry.uses.push(uses);
      }
    }
  });
  const edges = new Map<string, NameEdges>();
  for (const name of definers.keys()) {
    const block = nameEdges(name, files, definers, users, mentions);
    if (block) edges.set(name, block);
  }
  const names = [...edges.keys()].sort(compare);
  return { files: snapshot(files), mentioned, definers, users, edges, names, ...flatten(names, edges) };
}

/** The last index with the changed files' definitions and uses replaced, and only the names they touch re-derived. */
function patch(previous: GraphIndex, files: RepoFile[], changed: number[], mentions: Mentions): GraphIndex {
  const { definers, users, edges } = previous;
  const touched = new Set<string>();
  for (const index of changed) {
    const before = previous.files[index]?.tags;
    const after = files[index]?.tags;
    for (const definition of before?.definitions ?? []) {
      touched.add(definition.name);
      const list = definers.get(definition.name);
      if (list) removeSorted(list, index);
      if (list?.length === 0) definers.delete(definition.name);
    }
    for (const [name] of before?.references ?? []) {
      touched.add(name);
      const entry = users.get(name);
      if (!entry) continue;
      const at = entry.files.indexOf(index);
      if (at >= 0) {
        entry.files.splice(at, 1);
        entry.uses.splice(at, 1);
      }
      if (entry.files.length === 0) users.delete(name);
    }
    for (const definition of after?.definitions ?? []) {
      touched.add(definition.name);
      const list = definers.get(definition.name);
      if (!list) definers.set(definition.name, [index]);
      else insertSorted(list, index);
    }
    for (const [name, uses] of after?.references ?? []) {
      touched.add(name);
      const entry = users.get(name) ?? { files: [], uses: [] };
      users.set(name, entry);
      const at = lowerBound(entry.files, index);
      entry.files.splice(at, 0, index);
      entry.uses.splice(at, 0, uses);
    }
  }
  // A file now large (or no longer) changes the weight of edges into it: its definitions are touched above.
  let names = previous.names;
  let namesChanged = false;
  for (const name of touched) {
    const block = definers.has(name) ? nameEdges(name, files, definers, users, mentions) : undefined;
    const had = edges.has(name);
    if (block) edges.set(name, block);
    else edges.delete(name);
    if (had !== (block !== undefined)) namesChanged = true;
  }
  if (!namesChanged) return { ...previous, files: snapshot(files), ...refill(previous, touched, edges) };
  names = [...edges.keys()].sort(compare);
  return { ...previous, files: snapshot(files), names, ...flatten(names, edges) };
}

/** A name's edges: from each file using it (but not defining it) to each file defining it. */
function nameEdges(
  name: string,
  files: RepoFile[],
  definers: Map<string, number[]>,
  users: Map<string, { files: number[]; uses: number[] }>,
  mentions: Mentions,
): NameEdges | undefined {
  const targets = definers.get(name);
  const using = users.get(name);
  if (!targets || targets.length > MAX_DEFINERS || !using || using.files.length === 0) return undefined;
  const weight = identifierWeight(
    name,
    targets.length,
    using.files.length,
    files.length,
    mentions.identifiers.has(name),
  );
  const sources: number[] = [];
  const ends: number[] = [];
  const weights: number[] = [];
  using.files.forEach((from, k) => {
    // A file that defines the name itself means its own definition.
    if (targets.includes(from)) return;
    const edgeWeight = weight * Math.sqrt(using.uses[k] ?? 0);
    for (const to of targets) {
      sources.push(from);
      ends.push(to);
      weights.push(files[to]?.large ? edgeWeight * LARGE_FILE_WEIGHT : edgeWeight);
    }
  });
  return {
    sources: Int32Array.from(sources),
    targets: Int32Array.from(ends),
    weights: Float64Array.from(weights),
    singleDefiner: targets.length === 1,
  };
}

function flatten(names: string[], edges: Map<string, NameEdges>): { graph: UseGraph; offsets: Int32Array } {
  let count = 0;
  for (const name of names) count += edges.get(name)?.sources.length ?? 0;
  const graph = emptyGraph(names, count, []);
  const offsets = new Int32Array(names.length + 1);
  let at = 0;
  names.forEach((name, id) => {
    offsets[id] = at;
    const block = edges.get(name);
    graph.singleDefiner.push(block?.singleDefiner ?? false);
    if (block) at = place(graph, block, id, at);
  });
  offsets[names.length] = at;
  return { graph, offsets };
}

/**
 * The graph after a patch that kept the same names: the untouched names' edges copied from the
 * last graph in runs (a copy per run rather than per name), the touched names' from their blocks.
 * Equal to `flatten` of the same names and edges.
 */
function refill(
  previous: GraphIndex,
  touched: Set<string>,
  edges: Map<string, NameEdges>,
): { graph: UseGraph; offsets: Int32Array } {
  const { names } = previous;
  const before = previous.graph;
  const starts = previous.offsets;
  const ids = [...touched]
    .map((name) => nameId(names, name))
    .filter((id) => id >= 0)
    .sort((a, b) => a - b);
  let count = before.count;
  for (const id of ids)
    count += (edges.get(names[id] ?? "")?.sources.length ?? 0) - ((starts[id + 1] ?? 0) - (starts[id] ?? 0));
  const graph = emptyGraph(names, count, [...before.singleDefiner]);
  const offsets = new Int32Array(names.length + 1);
  let at = 0;
  let next = 0;
  // Copies the untouched names [next, end) as one run, shifted to `at`.
  const copyRun = (end: number) => {
    const from = starts[next] ?? 0;
    const to = starts[end] ?? 0;
    graph.sources.set(before.sources.subarray(from, to), at);
    graph.targets.set(before.targets.subarray(from, to), at);
    graph.weights.set(before.weights.subarray(from, to), at);
    graph.nameIds.set(before.nameIds.subarray(from, to), at);
    for (let id = next; id < end; id++) offsets[id] = (starts[id] ?? 0) - from + at;
    at += to - from;
  };
  for (const id of ids) {
    copyRun(id);
    offsets[id] = at;
    const block = edges.get(names[id] ?? "");
    graph.singleDefiner[id] = block?.singleDefiner ?? false;
    if (block) at = place(graph, block, id, at);
    next = id + 1;
  }
  copyRun(names.length);
  offsets[names.length] = at;
  return { graph, offsets };
}

function emptyGraph(names: string[], count: number, singleDefiner: boolean[]): UseGraph {
  return {
    sources: new Int32Array(count),
    targets: new Int32Array(count),
    weights: new Float64Array(count),
    nameIds: new Int32Array(count),
    names,
    singleDefiner,
    count,
  };
}

/** Writes a name's edges into the graph's arrays at `at`; returns where the next name's start. */
function place(graph: UseGraph, block: NameEdges, id: number, at: number): number {
  graph.sources.set(block.sources, at);
  graph.targets.set(block.targets, at);
  graph.weights.set(block.weights, at);
  graph.nameIds.fill(id, at, at + block.sources.length);
  return at + block.sources.length;
}

/** A name's id: its index in the sorted names, or -1. */
function nameId(names: string[], name: string): number {
  let low = 0;
  let high = names.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compare(names[middle] ?? "", name) < 0) low = middle + 1;
    else high = middle;
  }
  return names[low] === name ? low : -1;
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
