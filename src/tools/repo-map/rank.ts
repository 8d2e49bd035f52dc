import type { RepoFile } from "./collect-tags.js";
import { pathMatch, type Focus, type Mentions } from "./focus.js";
import { pagerank } from "./pagerank.js";
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
/** Files over the read limit are usually generated or vendored: what they define counts less. */
const LARGE_FILE_WEIGHT = 0.1;
/** Of a file's rank, what its definitions share without any reference (orders unreferenced ones by their file). */
const BASELINE_SHARE = 0.05;

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

/**
 * Files are nodes; a file that uses an identifier points at the files defining it. Personalised
 * PageRank over that graph ranks the files; each file's rank then flows along its edges to the
 * definitions it uses, which ranks definitions (within and across files) by the same scores.
 */
export function rankDefinitions(files: RepoFile[], focus: Focus, mentions: Mentions): Ranking {
  const definers = new Map<string, number[]>();
  files.forEach((file, index) => {
    for (const name of new Set(file.tags?.definitions.map((definition) => definition.name))) {
      const list = definers.get(name);
      if (list) list.push(index);
      else definers.set(name, [index]);
    }
  });
  const referencers = new Map<string, number>();
  for (const file of files) for (const [name] of file.tags?.references ?? []) if (definers.has(name)) referencers.set(name, (referencers.get(name) ?? 0) + 1);

  // Each use, once: (from, to, name, weight); walked to build the graph and again to share the ranks.
  const forEachUse = (visit: (from: number, to: number, name: string, weight: number) => void) => {
    files.forEach((file, from) => {
      for (const [name, count] of file.tags?.references ?? []) {
        const targets = definers.get(name);
        if (!targets) continue;
        const weight = identifierWeight(name, targets.length, referencers.get(name) ?? 0, files.length, mentions.identifiers.has(name)) * Math.sqrt(count);
        for (const to of targets) if (to !== from) visit(from, to, name, files[to]?.large ? weight * LARGE_FILE_WEIGHT : weight);
      }
    });
  };
  const edges = new Map<number, number>();
  forEachUse((from, to, _name, weight) => {
    const key = from * files.length + to;
    edges.set(key, (edges.get(key) ?? 0) + weight);
  });

  const personal = personalisation(files, focus, mentions);
  const ranks = pagerank(files.length, edges, personal.vector);

  const outWeight = new Float64Array(files.length);
  for (const [key, weight] of edges) {
    const from = Math.floor(key / files.length);
    outWeight[from] = (outWeight[from] ?? 0) + weight;
  }
  const definitionScores = new Map<string, number>();
  forEachUse((from, to, name, weight) => {
    const key = `${to}\0${name}`;
    definitionScores.set(key, (definitionScores.get(key) ?? 0) + ((ranks[from] ?? 0) * weight) / (outWeight[from] ?? 1));
  });

  const items: RankedItem[] = [];
  files.forEach((file, index) => {
    const rank = ranks[index] ?? 0;
    const fileTier = personal.fileTiers[index] ?? 2;
    const definitions = file.tags?.definitions ?? [];
    if (definitions.length === 0) items.push({ file: index, score: rank, tier: fileTier });
    for (const definition of definitions) {
      const score = (definitionScores.get(`${index}\0${definition.name}`) ?? 0) + (rank * BASELINE_SHARE) / definitions.length;
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
