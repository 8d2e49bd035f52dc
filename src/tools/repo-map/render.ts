import { countTokens } from "gpt-tokenizer";
import type { RepoFile } from "./collect-tags.js";
import type { RankedItem } from "./rank.js";
import { lowerBound } from "./sorted-numbers.js";
import type { Definition } from "./tags.js";

export interface RenderedMap {
  text: string;
  /** Tokens of `text`, counted with gpt-tokenizer (o200k_base). */
  tokens: number;
  /** Ranked items (definitions and name-only files) that fit. */
  shown: number;
}

const ELIDED = "   ⋮";
/** Token counts of lines seen before: the search renders the same lines many times. */
const lineTokens = new Map<string, number>();
const MAX_CACHED_LINES = 100_000;
/** Source may contain special-token text (`<|endoftext|>`): count it as the plain text it is. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

function tokensOfLine(line: string): number {
  let count = lineTokens.get(line);
  if (count === undefined) {
    count = countTokens(`${line}\n`, AS_TEXT);
    if (lineTokens.size >= MAX_CACHED_LINES) lineTokens.clear();
    lineTokens.set(line, count);
  }
  return count;
}

/**
 * The largest prefix of the ranked items whose map fits `budget` tokens: a search (doubling, then
 * binary) with a per-line estimate, then the whole text counted exactly and cut further if BPE across line ends
 * made it longer. The head (header and notes) is always kept; the footer says what was left out.
 */
export function fitToBudget(files: RepoFile[], items: RankedItem[], head: string[], budget: number): RenderedMap {
  const directories = directoriesOf(files);
  const limit = Math.min(items.length, budget);
  // The body's estimate per prefix, extended only as far as the search looks; only the footer is rendered per probe.
  const body = bodyEstimates(files, items, limit);
  const fixed = head.reduce((sum, line) => sum + tokensOfLine(line), 0) + tokensOfLine("");
  const estimate = (count: number) => {
    const footer = footerLines(files, directories, items, count, budget);
    // The footer follows a blank line.
    return (
      fixed +
      body(count) +
      footer.reduce((sum, line) => sum + tokensOfLine(line), footer.length > 0 ? tokensOfLine("") : 0)
    );
  };
  // Doubling first: a map shows a few hundred items, so lines far down the ranking are never counted.
  let low = 0;
  let high = Math.min(limit, FIRST_PROBE);
  while (high < limit && estimate(high) <= budget) {
    low = high;
    high = Math.min(limit, high * 2);
  }
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (estimate(middle) <= budget) low = middle;
    else high = middle - 1;
  }
  let shown = low;
  for (;;) {
    const text = renderLines(files, directories, items, head, shown, budget).join("\n");
    const tokens = countTokens(text, AS_TEXT);
    if (tokens <= budget || shown === 0) return { text, tokens, shown };
    shown = Math.floor(shown * 0.9);
  }
}

/** Items the search tries first. */
const FIRST_PROBE = 64;

/**
 * The estimated tokens of the body rendering the first k items (k up to `limit`): the same sum of
 * line estimates `renderLines` would give, kept up as each item joins its file's block (its line,
 * and the ⋮ markers that change around it), and computed only as far as asked.
 */
function bodyEstimates(files: RepoFile[], items: RankedItem[], limit: number): (count: number) => number {
  const estimates = new Float64Array(limit + 1);
  /**
   * Per file shown: the lines of its definitions shown so far, ascending (the first-ranked definition of a line is the
   * one shown).
   */
  const shownLines = new Map<number, number[]>();
  const elided = tokensOfLine(ELIDED);
  let total = 0;
  let done = 0;
  return (count) => {
    for (; done < Math.min(count, limit); done++) {
      const item = items[done];
      const file = item ? files[item.file] : undefined;
      if (item && file) {
        let lines = shownLines.get(item.file);
        if (!lines) {
          lines = [];
          shownLines.set(item.file, lines);
          total += tokensOfLine(fileLine(file));
        }
        const line = item.definition?.line;
        const at = line === undefined ? -1 : lowerBound(lines, line);
        if (item.definition && line !== undefined && lines[at] !== line) {
          const lineCount = file.tags?.lineCount ?? 0;
          const before = lines[at - 1] ?? 0;
          const after = lines[at];
          total +=
            definitionTokens(item.definition) +
            elided * (gap(before, line, lineCount) + gap(line, after, lineCount) - gap(before, after, lineCount));
          lines.splice(at, 0, line);
        }
      }
      estimates[done + 1] = total;
    }
    return estimates[Math.min(count, limit)] ?? 0;
  };
}

/**
 * Whether ⋮ stands between two shown lines (0 before the first; undefined past the last, where ⋮ closes a block that
 * ends before the file does).
 */
function gap(before: number, after: number | undefined, lineCount: number): number {
  if (after === undefined) return before > 0 && before < lineCount ? 1 : 0;
  return after > before + 1 ? 1 : 0;
}

/**
 * A definition's line as shown, counted once per definition (they come from the blob-keyed cache, so they live across
 * maps).
 */
const definitionLineTokens = new WeakMap<Definition, number>();

function definitionTokens(definition: Definition): number {
  let count = definitionLineTokens.get(definition);
  if (count === undefined) {
    count = tokensOfLine(definitionLine(definition));
    definitionLineTokens.set(definition, count);
  }
  return count;
}

/** Each file's directory, and how many files each directory holds: counted once, not per rendering tried. */
interface Directories {
  ofFile: string[];
  files: Map<string, number>;
}

/** The last tree's directories: a warm map has the same paths, and a one-file change too. */
let lastDirectories: { paths: string[]; directories: Directories } | undefined;

function directoriesOf(files: RepoFile[]): Directories {
  const last = lastDirectories;
  if (last && last.paths.length === files.length && files.every((file, index) => file.path === last.paths[index]))
    return last.directories;
  const directories = countDirectories(files);
  lastDirectories = { paths: files.map((file) => file.path), directories };
  return directories;
}

function countDirectories(files: RepoFile[]): Directories {
  const ofFile = files.map((file) => {
    const slash = file.path.lastIndexOf("/");
    return slash < 0 ? "./" : `${file.path.slice(0, slash)}/`;
  });
  const counts = new Map<string, number>();
  for (const dir of ofFile) counts.set(dir, (counts.get(dir) ?? 0) + 1);
  return { ofFile, files: counts };
}

function renderLines(
  files: RepoFile[],
  directories: Directories,
  items: RankedItem[],
  head: string[],
  count: number,
  budget: number,
): string[] {
  const byFile = new Map<number, Definition[]>();
  for (const item of items.slice(0, count)) {
    const list = byFile.get(item.file) ?? [];
    if (item.definition) list.push(item.definition);
    byFile.set(item.file, list);
  }
  const body: string[] = [];
  for (const [index, definitions] of byFile) {
    const file = files[index];
    if (!file) continue;
    body.push(fileLine(file));
    body.push(...definitionLines(definitions, file.tags?.lineCount ?? 0));
  }
  const footer = footerLines(files, directories, items, count, budget);
  return [...head, "", ...body, ...(footer.length > 0 ? ["", ...footer] : [])];
}

/**
 * What the first `count` items leave out: files not shown (and where they are), definitions not shown in the files
 * shown.
 */
function footerLines(
  files: RepoFile[],
  directories: Directories,
  items: RankedItem[],
  count: number,
  budget: number,
): string[] {
  const shownFiles = new Set<number>();
  let definitionsShown = 0;
  for (let k = 0; k < count; k++) {
    const item = items[k];
    if (!item) continue;
    shownFiles.add(item.file);
    if (item.definition) definitionsShown++;
  }
  let definitionsLeftOut = -definitionsShown;
  for (const index of shownFiles) definitionsLeftOut += files[index]?.tags?.definitions.length ?? 0;
  const footer: string[] = [];
  const unshown = files.length - shownFiles.size;
  if (unshown > 0) {
    footer.push(
      `… ${unshown} more file${unshown === 1 ? "" : "s"} not shown; call repo_map with focus (a directory, file or symbol name) or use list_files to see them.`,
    );
    const unshownByDirectory = new Map(directories.files);
    for (const index of shownFiles) {
      const dir = directories.ofFile[index];
      if (dir !== undefined) unshownByDirectory.set(dir, (unshownByDirectory.get(dir) ?? 0) - 1);
    }
    // Within a small budget the list of directories would crowd out the map itself.
    footer.push(unshownDirectories(unshownByDirectory, Math.min(500, budget / 2)));
  }
  if (definitionsLeftOut > 0) {
    footer.push(
      `… ${definitionsLeftOut} more definition${definitionsLeftOut === 1 ? "" : "s"} in the files shown; focus on a file, or read it.`,
    );
  }
  return footer;
}

function fileLine(file: RepoFile): string {
  const notes = [...(file.tags?.source === "regex" ? ["regex outline"] : []), ...(file.note ? [file.note] : [])];
  return notes.length > 0 ? `${file.path} (${notes.join("; ")})` : file.path;
}

/** The kept definitions in line order, one line each, with ⋮ wherever lines of the file are left out. */
function definitionLines(definitions: Definition[], lineCount: number): string[] {
  const lines: string[] = [];
  let previous = 0;
  for (const definition of [...definitions].sort((a, b) => a.line - b.line)) {
    if (definition.line === previous) continue;
    if (definition.line > previous + 1) lines.push(ELIDED);
    lines.push(definitionLine(definition));
    previous = definition.line;
  }
  if (lines.length > 0 && previous < lineCount) lines.push(ELIDED);
  return lines;
}

function definitionLine(definition: Definition): string {
  return `${String(definition.line).padStart(4)}│${definition.signature}`;
}

/** Where the files left out live, most first, so the next call can focus there. */
function unshownDirectories(counts: Map<string, number>, maxChars: number): string {
  const ranked = [...counts]
    .filter(([, count]) => count > 0)
    .sort(([a, countA], [b, countB]) => countB - countA || (a < b ? -1 : a > b ? 1 : 0));
  let text = "  in";
  let listed = 0;
  for (const [dir, count] of ranked) {
    const next = ` ${dir} (${count})${listed === ranked.length - 1 ? "" : ","}`;
    if (text.length + next.length > maxChars) break;
    text += next;
    listed++;
  }
  return listed < ranked.length ? `${text} and ${ranked.length - listed} more directories` : text;
}
