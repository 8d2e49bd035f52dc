import type { RepoFile } from "./collect-tags.js";
import { pathMatch, type Focus, type Mentions } from "./focus.js";
import { pagerank } from "./pagerank.js";
import { useGraph } from "./use-graph.js";
import type { Definition } from "./tags.js";

/** One line of the map to be: a definition, or a file shown by name only (no definitions). */
export interface RankedItem {
  file: number;
  definition?: Definition;
  score: number;
  /** 0: names a focused symbol; 1: in a focused file, or partly names a focus term; 2: the rest. */
  tier: 0 | 1 | 2;
}

export interface Ranking {
  /** Best first: every definition, then files without definitions. */
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
export function rankDefinitions(files: RepoFile[], focus: Focus, mentions: Mentions): Ranking {
  const graph = useGraph(files, mentions);
  const personal = personalisation(files, focus, mentions);
  const ranks = pagerank(files.length, graph, personal.vector);

  // Each file's rank flows to the definitions it uses, in proportion to the edge weights.
  const outWeight = new Float64Array(files.length);
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
  const nameIds = new Map(graph.names.map((name, id) => [name, id]));
  const scoreOf = (file: number, name: string) => {
    const id = nameIds.get(name);
    if (id === undefined) return 0;
    return graph.singleDefiner[id] ? (byName[id] ?? 0) : (byFileAndName.get(file * graph.names.length + id) ?? 0);
  };

  const items: RankedItem[] = [];
  files.forEach((file, index) => {
    const rank = ranks[index] ?? 0;
    const fileTier = personal.fileTiers[index] ?? 2;
    const definitions = file.tags?.definitions ?? [];
    if (definitions.length === 0) items.push({ file: index, score: rank, tier: fileTier });
    for (const definition of definitions) {
      const score = scoreOf(index, definition.name) + (rank * BASELINE_SHARE) / definitions.length;
      items.push({ file: index, definition, score, tier: Math.min(fileTier, symbolTier(definition.name, focus)) as RankedItem["tier"] });
    }
  });
  items.sort(
    (a, b) =>
      a.tier - b.tier ||
      Number(a.definition === undefined) - Number(b.definition === undefined) ||
      b.score - a.score ||
      compare(files[a.file]?.path ?? "", files[b.file]?.path ?? "") ||
      (a.definition?.line ?? 0) - (b.definition?.line ?? 0),
  );
  return { items, focusMatched: personal.matched };
}

function symbolTier(name: string, focus: Focus): 0 | 1 | 2 {
  const lower = name.toLowerCase();
  if (focus.keys.includes(lower)) return 0;
  return focus.keys.some((key) => key.length >= 3 && lower.includes(key)) ? 1 : 2;
}

function personalisation(files: RepoFile[], focus: Focus, mentions: Mentions): { vector: Float64Array | undefined; fileTiers: Array<1 | 2>; matched: boolean } {
  const vector = new Float64Array(files.length);
  const fileTiers: Array<1 | 2> = [];
  let matched = false;
  files.forEach((file, index) => {
    let weight = 0;
    let tier: 1 | 2 = 2;
    for (const key of focus.keys) {
      const match = pathMatch(file.path, key);
      if (match) {
        weight += PERSONAL[match];
        tier = 1;
      }
      for (const definition of file.tags?.definitions ?? []) {
        const tierOfName = symbolTier(definition.name, focus);
        if (tierOfName === 2) continue;
        weight += tierOfName === 0 ? PERSONAL.symbol : PERSONAL.part;
        break;
      }
    }
    if (mentions.paths.has(file.path) || [...mentions.paths].some((mentioned) => mentioned.includes("/") && file.path.endsWith(`/${mentioned}`))) weight += PERSONAL.mentionedPath;
    for (const definition of file.tags?.definitions ?? []) if (mentions.identifiers.has(definition.name)) weight += PERSONAL.mentionedIdentifier;
    if (tier === 1 || (file.tags?.definitions ?? []).some((definition) => symbolTier(definition.name, focus) < 2)) matched = true;
    vector[index] = weight;
    fileTiers.push(tier);
  });
  return { vector: vector.some((weight) => weight > 0) ? vector : undefined, fileTiers, matched };
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
