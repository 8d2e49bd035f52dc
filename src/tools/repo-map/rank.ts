import type { RepoFile } from "./collect-tags.js";
import { pathMatch, type Focus, type Mentions } from "./focus.js";
import { pagerank } from "./pagerank.js";
import { useGraph, type UseGraph } from "./use-graph.js";
import type { Definition, FileTags } from "./tags.js";

/** One line of the map to be: a definition, or a file shown by name only (no definitions). */
export interface RankedItem {
  file: number;
  /** Position in file order: the last tie-break, so that any selection of the best is the same. */
  order: number;
  definition?: Definition;
  score: number;
  /** 0: names a focused symbol; 1: in a focused file, or partly names a focus term; 2: the rest. */
  tier: 0 | 1 | 2;
}

export interface Ranking {
  /** Best first: definitions, then files without definitions; at most `limit` of them. */
  items: RankedItem[];
  /** Whether anything matched the focus. */
  focusMatched: boolean;
}

/** What a focus or mention adds to a file's personalisation. */
const PERSONAL = { path: 100, name: 90, symbol: 80, part: 20, mentionedPath: 10, mentionedIdentifier: 2 } as const;
/** Of a file's rank, what its definitions share without any reference (orders unreferenced ones by their file). */
const BASELINE_SHARE = 0.05;

/**
 * Files are nodes; a file that uses an identifier points at the files defining it. Personalised
 * PageRank over that graph ranks the files; each file's rank then flows along its edges to the
 * definitions it uses, which ranks definitions (within and across files) by the same scores.
 */
export function rankDefinitions(
  files: RepoFile[],
  focus: Focus,
  mentions: Mentions,
  limit = Number.POSITIVE_INFINITY,
): Ranking {
  const graph = useGraph(files, mentions);
  // The same graph (the tree unchanged) asked the same question: the same answer.
  const question = JSON.stringify([focus.keys, [...mentions.identifiers].sort(), [...mentions.paths].sort(), limit]);
  if (lastRanking && lastRanking.graph === graph && lastRanking.question === question) return lastRanking.ranking;

  const personal = personalisation(files, focus, mentions);
  const { ranks, scoreOf } = scoresOf(files.length, graph, personal.vector);
  const nameIds = definitionNameIds(graph);

  const order = (a: RankedItem, b: RankedItem) =>
    a.tier - b.tier ||
    Number(a.definition === undefined) - Number(b.definition === undefined) ||
    b.score - a.score ||
    compare(files[a.file]?.path ?? "", files[b.file]?.path ?? "") ||
    (a.definition?.line ?? 0) - (b.definition?.line ?? 0) ||
    a.order - b.order;
  // Every candidate in file order (its position is the last tie-break), as numbers: most cannot make the cut, and get
  // no object.
  const total = files.reduce((sum, file) => sum + Math.max(1, file.tags?.definitions.length ?? 0), 0);
  const fileOf = new Int32Array(total);
  const definitionAt = new Int32Array(total);
  /** tier × 2, plus 1 for a file without definitions: the order's first two keys. */
  const groups = new Uint8Array(total);
  const scores = new Float64Array(total);
  let count = 0;
  const add = (file: number, definition: number, group: number, score: number) => {
    fileOf[count] = file;
    definitionAt[count] = definition;
    groups[count] = group;
    scores[count] = score;
    count++;
  };
  files.forEach((file, index) => {
    const rank = ranks[index] ?? 0;
    const fileTier = personal.fileTiers[index] ?? 2;
    const tags = file.tags;
    const definitions = tags?.definitions ?? [];
    if (!tags || definitions.length === 0) {
      // Code that defines nothing and only uses what others define (a test file whose only tag was an
      // import): its uses already rank those definitions; its name alone says nothing, unless asked for.
      if (tags && tags.references.length > 0 && fileTier === 2) return;
      add(index, -1, fileTier * 2 + 1, rank);
      return;
    }
    const ids = nameIds(tags);
    const baseline = (rank * BASELINE_SHARE) / definitions.length;
    definitions.forEach((definition, at) => {
      const tier = focus.keys.length === 0 ? fileTier : Math.min(fileTier, symbolTier(definition.name, focus));
      add(index, at, tier * 2, scoreOf(index, ids[at] ?? -1) + baseline);
    });
  });
  // Files skipped above left the arrays' ends unused.
  const items = contenders(groups.subarray(0, count), scores.subarray(0, count), limit).map((candidate): RankedItem => {
    const file = fileOf[candidate] ?? 0;
    const definition = files[file]?.tags?.definitions[definitionAt[candidate] ?? -1];
    const tier = ((groups[candidate] ?? 4) >> 1) as RankedItem["tier"];
    return { file, order: candidate, ...(definition ? { definition } : {}), score: scores[candidate] ?? 0, tier };
  });
  const ranking = { items: items.sort(order).slice(0, limit), focusMatched: personal.matched };
  lastRanking = { graph, question, ranking };
  return ranking;
}

/**
 * The last ranking: a map asked for again on an unchanged tree (the model calls repo_map more than once) is not ranked
 * again.
 */
let lastRanking: { graph: UseGraph; question: string; ranking: Ranking } | undefined;

interface Scores {
  ranks: Float64Array;
  /** A definition's share of the ranks of the files using its name (by the name's id in the graph; -1 for none). */
  scoreOf: (file: number, nameId: number) => number;
}

/** The last scores: the same graph and personalisation (a map asked for again) give the same scores. */
let lastScores: { graph: UseGraph; personal: Float64Array | undefined; scores: Scores } | undefined;

function scoresOf(nodeCount: number, graph: UseGraph, personal: Float64Array | undefined): Scores {
  const previous = lastScores;
  if (previous && previous.graph === graph && sameVector(previous.personal, personal)) return previous.scores;
  const ranks = pagerank(nodeCount, graph, personal);
  // Each file's rank flows to the definitions it uses, in proportion to the edge weights.
  const outWeight = new Float64Array(nodeCount);
  for (let e = 0; e < graph.count; e++) {
    const from = graph.sources[e] ?? 0;
    outWeight[from] = (outWeight[from] ?? 0) + (graph.weights[e] ?? 0);
  }
  // Most names have one definer: their score is kept by name id; the rest by (file, name id).
  const byName = new Float64Array(graph.names.length);
  const byFileAndName = new Map<number, number>();
  for (let e = 0; e < graph.count; e++) {
    const from = graph.sources[e] ?? 0;
    const nameId = graph.nameIds[e] ?? 0;
    const flow = ((ranks[from] ?? 0) * (graph.weights[e] ?? 0)) / (outWeight[from] || 1);
    if (graph.singleDefiner[nameId]) byName[nameId] = (byName[nameId] ?? 0) + flow;
    else {
      const key = (graph.targets[e] ?? 0) * graph.names.length + nameId;
      byFileAndName.set(key, (byFileAndName.get(key) ?? 0) + flow);
    }
  }
  const scoreOf = (file: number, id: number) => {
    if (id < 0) return 0;
    return graph.singleDefiner[id] ? (byName[id] ?? 0) : (byFileAndName.get(file * graph.names.length + id) ?? 0);
  };
  const scores = { ranks, scoreOf };
  lastScores = { graph, personal, scores };
  return scores;
}

/**
 * The graph's name id of each definition of a file's tags (-1 for a name without edges). Kept per
 * tags object while the graph's names stay the same array: after a one-file change only that file's are looked up
 * again.
 */
let nameIdCache: { names: string[]; byName: Map<string, number>; byTags: WeakMap<FileTags, Int32Array> } | undefined;

function definitionNameIds(graph: UseGraph): (tags: FileTags) => Int32Array {
  if (nameIdCache?.names !== graph.names)
    nameIdCache = {
      names: graph.names,
      byName: new Map(graph.names.map((name, id) => [name, id])),
      byTags: new WeakMap(),
    };
  const { byName, byTags } = nameIdCache;
  return (tags) => {
    let ids = byTags.get(tags);
    if (!ids) {
      ids = Int32Array.from(tags.definitions, (definition) => byName.get(definition.name) ?? -1);
      byTags.set(tags, ids);
    }
    return ids;
  };
}

function sameVector(a: Float64Array | undefined, b: Float64Array | undefined): boolean {
  if (!a || !b) return a === b;
  return a.length === b.length && a.every((value, index) => value === b[index]);
}

/**
 * The candidates that can be among the `limit` best: all of the better groups, and in the group
 * where the cut falls those scoring at least the last place's score (ties at the cut included, for
 * the full order to settle). Sorted and cut to `limit`, they are exactly a full sort's prefix,
 * without sorting or making objects for the tens of thousands that cannot make it.
 */
function contenders(groups: Uint8Array, scores: Float64Array, limit: number): number[] {
  const chosen: number[] = [];
  if (limit <= 0) return chosen;
  // Every group is above the cut unless there are more candidates than places.
  let cut = 6;
  let lowest = Number.NEGATIVE_INFINITY;
  if (groups.length > limit) {
    const perGroup = new Int32Array(7);
    for (const group of groups) perGroup[group] = (perGroup[group] ?? 0) + 1;
    let before = 0;
    for (cut = 0; before + (perGroup[cut] ?? 0) < limit; cut++) before += perGroup[cut] ?? 0;
    const inCut = new Float64Array(perGroup[cut] ?? 0);
    let filled = 0;
    for (let candidate = 0; candidate < groups.length; candidate++)
      if (groups[candidate] === cut) inCut[filled++] = scores[candidate] ?? 0;
    inCut.sort();
    lowest = inCut[inCut.length - (limit - before)] ?? Number.NEGATIVE_INFINITY;
  }
  for (let candidate = 0; candidate < groups.length; candidate++) {
    const group = groups[candidate] ?? 0;
    if (group < cut || (group === cut && (scores[candidate] ?? 0) >= lowest)) chosen.push(candidate);
  }
  return chosen;
}

function symbolTier(name: string, focus: Focus): 0 | 1 | 2 {
  const lower = name.toLowerCase();
  if (focus.keys.includes(lower)) return 0;
  return focus.keys.some((key) => key.length >= 3 && lower.includes(key)) ? 1 : 2;
}

function personalisation(
  files: RepoFile[],
  focus: Focus,
  mentions: Mentions,
): { vector: Float64Array | undefined; fileTiers: Array<1 | 2>; matched: boolean } {
  const fileTiers: Array<1 | 2> = new Array<1 | 2>(files.length).fill(2);
  // Nothing asked and nothing mentioned: a uniform teleport, and no file singled out.
  if (focus.keys.length === 0 && mentions.paths.size === 0 && mentions.identifiers.size === 0)
    return { vector: undefined, fileTiers, matched: false };
  const vector = new Float64Array(files.length);
  const mentionedFolders = [...mentions.paths]
    .filter((mentioned) => mentioned.includes("/"))
    .map((mentioned) => `/${mentioned}`);
  let matched = false;
  files.forEach((file, index) => {
    let weight = 0;
    let tier: 1 | 2 = 2;
    const definitions = file.tags?.definitions ?? [];
    for (const key of focus.keys) {
      const match = pathMatch(file.path, key);
      if (match) {
        weight += PERSONAL[match];
        tier = 1;
      }
      for (const definition of definitions) {
        const tierOfName = symbolTier(definition.name, focus);
        if (tierOfName === 2) continue;
        weight += tierOfName === 0 ? PERSONAL.symbol : PERSONAL.part;
        matched = true;
        break;
      }
    }
    if (mentions.paths.has(file.path) || mentionedFolders.some((mentioned) => file.path.endsWith(mentioned)))
      weight += PERSONAL.mentionedPath;
    for (const definition of definitions)
      if (mentions.identifiers.has(definition.name)) weight += PERSONAL.mentionedIdentifier;
    if (tier === 1) matched = true;
    vector[index] = weight;
    fileTiers[index] = tier;
  });
  return { vector: vector.some((weight) => weight > 0) ? vector : undefined, fileTiers, matched };
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
