import { constants, promises as fs } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { defineTool, toolError, type ToolContext } from "./tool.js";
import { PathError, resolveInWorkspace } from "./paths.js";
import { gitFailure, gitRead, looksBinary } from "./git-read.js";
import { extractSymbols, hasOutline, type SourceSymbol } from "./extract-symbols.js";

/** The map is a starting point, not the repository: with header and footer it stays near 8,000 characters. */
const MAX_OUTPUT_CHARS = 7000;
/** Symbols get what naming the files leaves, within these bounds, so that later files are at least named. */
const MAX_SYMBOL_CHARS = 6000;
const MIN_SYMBOL_CHARS = 4000;
const MAX_FILES_SHOWN = 400;
/** The footer's list of directories whose files were left out. */
const MAX_UNSHOWN_DIRECTORY_CHARS = 500;
/** Per file; a file whose path or symbols match the focus gets more. */
const MAX_SYMBOLS_PER_FILE = 10;
const MAX_SYMBOLS_PER_FOCUSED_FILE = 40;
/** Only the head of a file is outlined; bigger files are usually generated or vendored. */
const MAX_FILE_BYTES = 128 * 1024;
/** Beyond this many source files the rest are listed by name only (reading them all would be slow). */
const MAX_SCANNED_FILES = 2000;
const READ_CONCURRENCY = 16;
const MAX_FOCUS_TERMS = 20;
/** File names that say nothing about the module: `lib/index.ts` is imported as `lib`. */
const GENERIC_STEMS = new Set(["index", "mod", "__init__", "main", "lib"]);
/** What a focus term adds to a file's score, per term; content mentions count once. */
const FOCUS_SCORE = { path: 100, fileName: 90, symbol: 80, pathPart: 60, symbolPart: 50, mentioned: 10 } as const;
/** Never follow a symbolic link at open time, nor block on a FIFO swapped in for a file. */
const NO_FOLLOW_READ = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

const focusSchema = z
  .union([z.string().max(1000), z.array(z.string().max(300)).max(50)], {
    error: "must be a string or an array of strings (directories, file names or symbol names)",
  })
  .nullish()
  .describe("Directories, file paths, file names or symbol names to rank first, e.g. [\"src/tools\", \"retry\"].");

export const repoMapTool = defineTool({
  name: "repo_map",
  description:
    "A compact map of the repository to start exploring: the tracked files grouped by directory, with the top-level symbols of source files (functions, classes, types, exported constants) and their line numbers. Files and symbols matching focus come first, then the files most imported by others. The map is size-bounded and says what it left out.",
  schema: z.object({ focus: focusSchema }),
  modes: ["plan", "build"],
  async run(args, context) {
    const focus = focusTerms(args.focus);
    const listing = await gitRead(context.root, ["ls-files", "-z", "--cached", "--full-name"]);
    if (listing.code !== 0) return toolError(`listing the repository failed: ${gitFailure(listing, "ls-files")}`);
    const paths = [...new Set(listing.stdout.split("\0").filter((file) => file && !file.startsWith("../")))].sort();
    if (paths.length === 0) return { content: "The repository has no tracked files yet. Use list_files to see untracked ones." };

    const mentions = await filesMentioning(context.root, focus.keys);
    const files = paths.map((file) => newMapFile(file, focus.keys, mentions.files));
    const scanned = await outlineFiles(files, context);
    countReferences(files);
    for (const file of files) scoreSymbols(file, focus.keys);
    files.sort(byRelevance);

    const notes: string[] = [];
    if (focus.dropped > 0) notes.push(`Only the first ${MAX_FOCUS_TERMS} focus terms were used.`);
    if (mentions.problem) notes.push(`Searching file contents for the focus failed (${mentions.problem}); ranked by names only.`);
    if (focus.keys.length > 0 && !files.some((file) => file.focusScore > 0)) {
      notes.push(`Nothing matched the focus (${focus.terms.join(", ")}); showing the whole repository.`);
    }
    if (scanned.skipped > 0) notes.push(`${scanned.skipped} source files were not outlined (only ${MAX_SCANNED_FILES} are read per call); focus on a directory to outline them.`);
    return { content: renderMap(files, focus.terms, notes) };
  },
});

interface MapFile {
  path: string;
  depth: number;
  /** Relevance to the focus (see FOCUS_SCORE). */
  focusScore: number;
  /** How many other files import something with this file's name. */
  references: number;
  symbols: SourceSymbol[];
  focusedSymbols: Set<SourceSymbol>;
  importWords: string[];
  /** Why the file was not outlined, shown next to its name. */
  note?: string;
}

interface Focus {
  /** As the model wrote them (normalised), for the header. */
  terms: string[];
  /** Lower-cased, for case-insensitive matching. */
  keys: string[];
  dropped: number;
}

/** A string may hold several terms, split on spaces or commas. */
function focusTerms(focus: string | string[] | null | undefined): Focus {
  const raw = typeof focus === "string" ? focus.split(/[\s,]+/) : (focus ?? []);
  const byKey = new Map<string, string>();
  for (const entry of raw) {
    const term = entry
      .trim()
      .replaceAll("\\", "/")
      .replace(/^(?:\.\/|\/)+/, "")
      .replace(/(?:\/|\(\))+$/, "");
    if (term !== "" && term !== "." && !byKey.has(term.toLowerCase())) byKey.set(term.toLowerCase(), term);
  }
  const kept = [...byKey].slice(0, MAX_FOCUS_TERMS);
  return { terms: kept.map(([, term]) => term), keys: kept.map(([key]) => key), dropped: byKey.size - kept.length };
}

/** Tracked text files whose content mentions a focus term (git grep: fast, off the main thread). */
async function filesMentioning(root: string, terms: string[]): Promise<{ files: Set<string>; problem?: string }> {
  if (terms.length === 0) return { files: new Set() };
  const result = await gitRead(root, ["grep", "-l", "-z", "-I", "-i", "-F", "--full-name", "--no-color", ...terms.flatMap((term) => ["-e", term])]);
  if (result.code === 1) return { files: new Set() };
  if (result.code !== 0) return { files: new Set(), problem: gitFailure(result, "grep") };
  return { files: new Set(result.stdout.split("\0").filter(Boolean)) };
}

function newMapFile(file: string, terms: string[], mentioned: Set<string>): MapFile {
  const lower = file.toLowerCase();
  const base = path.posix.basename(lower);
  const stem = base.replace(/\.[^.]*$/, "");
  let focusScore = 0;
  for (const term of terms) {
    if (lower === term || lower.startsWith(`${term}/`)) focusScore += FOCUS_SCORE.path;
    else if (base === term || stem === term) focusScore += FOCUS_SCORE.fileName;
    else if (lower.includes(term)) focusScore += FOCUS_SCORE.pathPart;
  }
  if (mentioned.has(file)) focusScore += FOCUS_SCORE.mentioned;
  return { path: file, depth: file.split("/").length - 1, focusScore, references: 0, symbols: [], focusedSymbols: new Set(), importWords: [] };
}

/** Reads and outlines source files, those the focus points at first; returns how many were left unread. */
async function outlineFiles(files: MapFile[], context: ToolContext): Promise<{ skipped: number }> {
  const candidates = files.filter((file) => hasOutline(file.path)).sort((a, b) => b.focusScore - a.focusScore || a.depth - b.depth || compare(a.path, b.path));
  const chosen = candidates.slice(0, MAX_SCANNED_FILES);
  let next = 0;
  const worker = async () => {
    while (next < chosen.length) {
      context.signal?.throwIfAborted();
      const file = chosen[next++];
      if (file) await outlineFile(file, context.root);
    }
  };
  await Promise.all(Array.from({ length: READ_CONCURRENCY }, worker));
  return { skipped: candidates.length - chosen.length };
}

async function outlineFile(file: MapFile, root: string): Promise<void> {
  const head = await readHead(root, file.path);
  if (head.note) file.note = head.note;
  const outline = head.text === undefined ? undefined : extractSymbols(file.path, head.text);
  if (!outline) return;
  file.symbols = outline.symbols;
  file.importWords = outline.references;
}

/**
 * The first MAX_FILE_BYTES of a workspace file, or why it is not read. Confined like read_file:
 * the path must resolve inside the workspace, and a symbolic link is never followed.
 */
async function readHead(root: string, relative: string): Promise<{ text?: string; note?: string }> {
  let absolute: string;
  try {
    absolute = (await resolveInWorkspace(root, relative)).absolute;
  } catch (error) {
    if (error instanceof PathError) return { note: "not read: it leads outside the repository" };
    throw error;
  }
  const stat = await fs.lstat(absolute).catch(() => null);
  if (!stat) return { note: "deleted in the working tree" };
  if (stat.isSymbolicLink()) return { note: "symbolic link" };
  if (!stat.isFile()) return {};
  const handle = await fs.open(absolute, NO_FOLLOW_READ).catch(() => null);
  if (!handle) return { note: "not readable" };
  try {
    const buffer = Buffer.alloc(Math.min(stat.size, MAX_FILE_BYTES));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const bytes = buffer.subarray(0, bytesRead);
    if (looksBinary(bytes)) return { note: "binary" };
    const text = bytes.toString("utf8");
    if (stat.size <= MAX_FILE_BYTES) return { text };
    // Drop the partial last line; the outline covers only the head of the file.
    return { text: text.slice(0, text.lastIndexOf("\n") + 1), note: `${formatSize(stat.size)}; outlined from the first ${MAX_FILE_BYTES / 1024} KB` };
  } finally {
    await handle.close();
  }
}

/** A file is referenced by every other file whose imports name its stem (or its directory, for `index.ts`-like files and Go packages). */
function countReferences(files: MapFile[]): void {
  const importers = new Map<string, number>();
  for (const file of files) for (const word of file.importWords) importers.set(word, (importers.get(word) ?? 0) + 1);
  for (const file of files) {
    const lower = file.path.toLowerCase();
    const stem = path.posix.basename(lower).replace(/\.[^.]*$/, "");
    const dir = path.posix.basename(path.posix.dirname(lower));
    const keys = GENERIC_STEMS.has(stem) || lower.endsWith(".go") ? [dir] : [stem];
    for (const key of keys) {
      const others = (importers.get(key) ?? 0) - (file.importWords.includes(key) ? 1 : 0);
      file.references = Math.max(file.references, others);
    }
  }
}

function scoreSymbols(file: MapFile, terms: string[]): void {
  for (const term of terms) {
    let best = 0;
    for (const symbol of file.symbols) {
      const name = symbol.name.toLowerCase();
      const score = name === term || name.endsWith(`.${term}`) ? FOCUS_SCORE.symbol : name.includes(term) ? FOCUS_SCORE.symbolPart : 0;
      if (score > 0) file.focusedSymbols.add(symbol);
      best = Math.max(best, score);
    }
    file.focusScore += best;
  }
}

function byRelevance(a: MapFile, b: MapFile): number {
  return b.focusScore - a.focusScore || b.references - a.references || a.depth - b.depth || compare(a.path, b.path);
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

interface ShownFile {
  file: MapFile;
  lines: string[];
}

/**
 * Fills the budget in relevance order: a file's line, then its symbols while the symbol budget
 * lasts. Shown files are then grouped by directory, directories in the order of their best file.
 */
function renderMap(files: MapFile[], terms: string[], notes: string[]): string {
  const symbolBudget = symbolBudgetFor(files);
  const byDirectory = new Map<string, ShownFile[]>();
  let used = 0;
  let symbolChars = 0;
  let shown = 0;
  let symbolsLeftOut = 0;
  let filesWithSymbolsLeftOut = 0;
  for (const file of files) {
    if (shown >= MAX_FILES_SHOWN) break;
    const dir = path.posix.dirname(file.path);
    const dirCost = byDirectory.has(dir) ? 0 : directoryLine(dir).length + 1;
    const nameLine = fileLine(file);
    if (used + dirCost + nameLine.length + 1 > MAX_OUTPUT_CHARS) break;
    used += dirCost + nameLine.length + 1;
    shown++;
    const lines = [nameLine];
    const symbols = symbolsToShow(file);
    let listed = 0;
    for (const symbol of symbols) {
      const line = `    ${symbol.line}: ${symbol.member ? "  " : ""}${symbol.kind} ${symbol.name}`;
      if (symbolChars + line.length + 1 > symbolBudget || used + line.length + 1 > MAX_OUTPUT_CHARS) break;
      lines.push(line);
      symbolChars += line.length + 1;
      used += line.length + 1;
      listed++;
    }
    const hidden = file.symbols.length - listed;
    if (hidden > 0) {
      const line = `    … ${hidden} more symbol${hidden === 1 ? "" : "s"}`;
      if (listed > 0 && used + line.length + 1 <= MAX_OUTPUT_CHARS) {
        lines.push(line);
        used += line.length + 1;
      }
      symbolsLeftOut += hidden;
      filesWithSymbolsLeftOut++;
    }
    const group = byDirectory.get(dir) ?? [];
    group.push({ file, lines });
    byDirectory.set(dir, group);
  }

  const focusText = terms.length > 0 ? ` (focus: ${terms.join(", ")})` : "";
  const header = `Repository map: ${files.length} tracked file${files.length === 1 ? "" : "s"}, most relevant first${focusText}. Symbols are "line: kind name"; read the code with read_file.`;
  const body = [...byDirectory].map(([dir, group]) => [directoryLine(dir), ...group.flatMap((entry) => entry.lines)].join("\n"));
  const leftOut: string[] = [];
  if (shown < files.length) {
    leftOut.push(`… ${files.length - shown} more file${files.length - shown === 1 ? "" : "s"} not shown; call repo_map with focus (a directory, file or symbol name) or use list_files to see them.`);
    leftOut.push(unshownDirectories(files.slice(shown)));
  }
  if (symbolsLeftOut > 0) {
    leftOut.push(`… ${symbolsLeftOut} symbol${symbolsLeftOut === 1 ? "" : "s"} of ${filesWithSymbolsLeftOut} listed file${filesWithSymbolsLeftOut === 1 ? "" : "s"} left out; call repo_map with focus on a file, or read it.`);
  }
  return [header, ...notes, "", ...body, ...(leftOut.length > 0 ? ["", ...leftOut] : [])].join("\n");
}

/** Where the files left out live, most first, so the next call can focus there. */
function unshownDirectories(unshown: MapFile[]): string {
  const counts = new Map<string, number>();
  for (const file of unshown) {
    const dir = directoryLine(path.posix.dirname(file.path));
    counts.set(dir, (counts.get(dir) ?? 0) + 1);
  }
  const ranked = [...counts].sort(([a, countA], [b, countB]) => countB - countA || compare(a, b));
  let text = "  in";
  let listed = 0;
  for (const [dir, count] of ranked) {
    const next = ` ${dir} (${count})${listed === ranked.length - 1 ? "" : ","}`;
    if (text.length + next.length > MAX_UNSHOWN_DIRECTORY_CHARS) break;
    text += next;
    listed++;
  }
  return listed < ranked.length ? `${text} and ${ranked.length - listed} more directories` : text;
}

const directoryLine = (dir: string): string => (dir === "." ? "./" : `${dir}/`);
const fileLine = (file: MapFile): string => `  ${path.posix.basename(file.path)}${file.note ? ` (${file.note})` : ""}`;

/** What naming every file (up to the cap) leaves for symbols, within bounds. */
function symbolBudgetFor(files: MapFile[]): number {
  const directories = new Set<string>();
  let names = 0;
  for (const file of files.slice(0, MAX_FILES_SHOWN)) {
    const dir = path.posix.dirname(file.path);
    if (!directories.has(dir)) names += directoryLine(dir).length + 1;
    directories.add(dir);
    names += fileLine(file).length + 1;
  }
  return Math.min(MAX_SYMBOL_CHARS, Math.max(MIN_SYMBOL_CHARS, MAX_OUTPUT_CHARS - names));
}

/** A few symbols in line order; focus matches, then top-level declarations, are the last to be cut. */
function symbolsToShow(file: MapFile): SourceSymbol[] {
  const focused = file.focusScore >= FOCUS_SCORE.symbolPart;
  const limit = focused ? MAX_SYMBOLS_PER_FOCUSED_FILE : MAX_SYMBOLS_PER_FILE;
  const priority = (symbol: SourceSymbol) => (file.focusedSymbols.has(symbol) ? 0 : symbol.member ? 2 : 1);
  const kept = [...file.symbols].sort((a, b) => priority(a) - priority(b) || a.line - b.line).slice(0, limit);
  return kept.sort((a, b) => a.line - b.line);
}

function formatSize(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MB` : `${Math.round(bytes / 1024)} KB`;
}
