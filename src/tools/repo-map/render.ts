import { countTokens } from "gpt-tokenizer";
import type { RepoFile } from "./collect-tags.js";
import type { RankedItem } from "./rank.js";
import type { Definition } from "./tags.js";

export interface RenderedMap {
  text: string;
  /** Tokens of `text`, counted with gpt-tokenizer (o200k_base). */
  tokens: number;
  /** Ranked items (definitions and name-only files) that fit. */
  shown: number;
}

const ELIDED = "   ⋮";
/** Token counts of lines seen before: the binary search renders the same lines many times. */
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
 * The largest prefix of the ranked items whose map fits `budget` tokens: binary search with a
 * per-line estimate, then the whole text counted exactly and cut further if BPE across line ends
 * made it longer. The head (header and notes) is always kept; the footer says what was left out.
 */
export function fitToBudget(files: RepoFile[], items: RankedItem[], head: string[], budget: number): RenderedMap {
  const estimate = (lines: string[]) => lines.reduce((sum, line) => sum + tokensOfLine(line), 0);
  const directories = directoriesOf(files);
  let low = 0;
  let high = Math.min(items.length, budget);
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (estimate(renderLines(files, directories, items, head, middle, budget)) <= budget) low = middle;
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

/** Each file's directory, and how many files each directory holds: counted once, not per rendering tried. */
interface Directories {
  ofFile: string[];
  files: Map<string, number>;
}

function directoriesOf(files: RepoFile[]): Directories {
  const ofFile = files.map((file) => {
    const slash = file.path.lastIndexOf("/");
    return slash < 0 ? "./" : `${file.path.slice(0, slash)}/`;
  });
  const counts = new Map<string, number>();
  for (const dir of ofFile) counts.set(dir, (counts.get(dir) ?? 0) + 1);
  return { ofFile, files: counts };
}

function renderLines(files: RepoFile[], directories: Directories, items: RankedItem[], head: string[], count: number, budget: number): string[] {
  const byFile = new Map<number, Definition[]>();
  for (const item of items.slice(0, count)) {
    const list = byFile.get(item.file) ?? [];
    if (item.definition) list.push(item.definition);
    byFile.set(item.file, list);
  }
  const body: string[] = [];
  let definitionsLeftOut = 0;
  for (const [index, definitions] of byFile) {
    const file = files[index];
    if (!file) continue;
    body.push(fileLine(file));
    definitionsLeftOut += (file.tags?.definitions.length ?? 0) - definitions.length;
    body.push(...definitionLines(definitions, file.tags?.lineCount ?? 0));
  }
  const footer: string[] = [];
  const unshown = files.length - byFile.size;
  if (unshown > 0) {
    footer.push(`… ${unshown} more file${unshown === 1 ? "" : "s"} not shown; call repo_map with focus (a directory, file or symbol name) or use list_files to see them.`);
    const unshownByDirectory = new Map(directories.files);
    for (const index of byFile.keys()) {
      const dir = directories.ofFile[index];
      if (dir !== undefined) unshownByDirectory.set(dir, (unshownByDirectory.get(dir) ?? 0) - 1);
    }
    // Within a small budget the list of directories would crowd out the map itself.
    footer.push(unshownDirectories(unshownByDirectory, Math.min(500, budget / 2)));
  }
  if (definitionsLeftOut > 0) {
    footer.push(`… ${definitionsLeftOut} more definition${definitionsLeftOut === 1 ? "" : "s"} in the files shown; focus on a file, or read it.`);
  }
  return [...head, "", ...body, ...(footer.length > 0 ? ["", ...footer] : [])];
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
    lines.push(`${String(definition.line).padStart(4)}│${definition.signature}`);
    previous = definition.line;
  }
  if (lines.length > 0 && previous < lineCount) lines.push(ELIDED);
  return lines;
}

/** Where the files left out live, most first, so the next call can focus there. */
function unshownDirectories(counts: Map<string, number>, maxChars: number): string {
  const ranked = [...counts].filter(([, count]) => count > 0).sort(([a, countA], [b, countB]) => countB - countA || (a < b ? -1 : a > b ? 1 : 0));
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
