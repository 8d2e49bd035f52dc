import { createHash } from "node:crypto";
import { gitFailure, gitRead } from "../git-read.js";
import { extractSymbols, hasOutline } from "../extract-symbols.js";
import { parsedLanguageOf, type ParsedLanguage } from "./queries.js";
import { loadPersistedTags, persistTags, type CachedTags } from "./disk-cache.js";
import { generatedReason } from "./generated.js";
import { readHead } from "./read-head.js";
import { parseInWorkers, type ParseJob } from "./tag-pool.js";
import { normaliseTags, signatureLine, type FileTags } from "./tags.js";

/** A tracked file as the map sees it. */
export interface RepoFile {
  path: string;
  tags?: FileTags;
  /** Why the file was not (fully) outlined, shown next to its name. */
  note?: string;
  /** Bigger than the read limit: only its head was outlined. */
  large?: boolean;
  /** Minified or generated: listed by name only. */
  generated?: boolean;
}

export interface CollectedTags {
  files: RepoFile[];
  /** Parsers could not run here (the Action bundle): parsed languages got the regex outline. */
  parsersUnavailable: boolean;
  /** How many files were parsed or outlined now (the rest came from the cache). */
  parsed: number;
  /** Files left unoutlined as minified or generated. */
  generated: number;
  /** Why the tags could not be written to the cache directory, if they could not. */
  cacheError?: string;
}

/** Tags by blob SHA (and language): a blob's tags never change, so a warm map re-parses only changed files. */
const cache = new Map<string, CachedTags>();
const MAX_CACHED = 200_000;
/** Repository cache directories read into `cache` by this process. */
const loadedDirs = new Set<string>();
/** Per cache directory: files parsed since its file was last written. A one-file change does not rewrite it; a push does. */
const unsavedParses = new Map<string, number>();
const PERSIST_AFTER = 32;
/** Files read per wave: bounds the text held in memory at once. */
const WAVE = 1000;
const READ_CONCURRENCY = 16;

interface TrackedEntry {
  path: string;
  mode: string;
  sha: string;
}

/**
 * The tracked files with their blob SHAs, from the index, and those changed in the working tree:
 * one `git ls-files -t -c -m -s` (a spawned git is a good part of a warm map), where `H` tags a
 * cached entry and `C` a changed one.
 */
async function listTracked(root: string): Promise<{ entries: TrackedEntry[]; modified: Set<string> }> {
  const listed = await gitRead(root, ["ls-files", "-t", "-c", "-m", "-s", "-z", "--full-name"]);
  if (listed.code !== 0) throw new Error(gitFailure(listed, "ls-files"));
  const byPath = new Map<string, TrackedEntry>();
  const modified = new Set<string>();
  for (const record of listed.stdout.split("\0")) {
    const tab = record.indexOf("\t");
    if (tab < 0) continue;
    const [status = "", mode = "", sha = ""] = record.slice(0, tab).split(" ");
    const file = record.slice(tab + 1);
    if (file.startsWith("../")) continue;
    if (status === "C" || status === "R") modified.add(file);
    if (!byPath.has(file)) byPath.set(file, { path: file, mode, sha });
  }
  const entries = [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { entries, modified };
}

/** The regex outline of a language without a parser (or when parsers are unavailable). */
function regexTags(file: string, text: string): FileTags | undefined {
  const outline = extractSymbols(file, text);
  if (!outline) return undefined;
  const lines = text.split("\n");
  const definitions = outline.symbols.map((symbol) => ({
    name: symbol.name.slice(symbol.name.lastIndexOf(".") + 1),
    kind: symbol.kind,
    line: symbol.line,
    signature: signatureLine(lines[symbol.line - 1] ?? ""),
  }));
  const counts = new Map<string, number>();
  for (const match of text.matchAll(/[A-Za-z_$][\w$]*/g)) counts.set(match[0], (counts.get(match[0]) ?? 0) + 1);
  for (const definition of definitions) {
    const count = counts.get(definition.name) ?? 0;
    if (count <= 1) counts.delete(definition.name);
    else counts.set(definition.name, count - 1);
  }
  return normaliseTags("regex", definitions, counts, lines.length - (text.endsWith("\n") ? 1 : 0));
}

interface Pending {
  file: RepoFile;
  key: string;
  language: ParsedLanguage | undefined;
  text: string;
  note?: string;
  large: boolean;
}

/** Tags for every tracked file: from the cache by blob SHA, else read and parsed (off the main thread). */
export async function collectTags(root: string, signal?: AbortSignal, cacheDir?: string): Promise<CollectedTags> {
  const [{ entries, modified }, persisted] = await Promise.all([listTracked(root), cacheDir && !loadedDirs.has(cacheDir) ? loadPersistedTags(cacheDir) : undefined]);
  if (cacheDir && persisted) {
    loadedDirs.add(cacheDir);
    for (const [key, value] of persisted) if (!cache.has(key)) remember(key, value);
    // Nothing on disk yet: the first map writes it, however few files it parsed.
    if (persisted.size === 0) unsavedParses.set(cacheDir, PERSIST_AFTER);
  }
  const keys: string[] = [];
  const files: RepoFile[] = [];
  const toRead: Array<{ file: RepoFile; entry: TrackedEntry; language: ParsedLanguage | undefined }> = [];
  for (const entry of entries) {
    const file: RepoFile = { path: entry.path };
    files.push(file);
    if (entry.mode === "120000") file.note = "symbolic link";
    else if (entry.mode === "160000") file.note = "submodule";
    else {
      const language = parsedLanguageOf(entry.path);
      if (!language && !hasOutline(entry.path)) continue;
      const key = `${entry.sha}:${language ?? "regex"}`;
      const cached = modified.has(entry.path) ? undefined : cache.get(key);
      if (cached) {
        Object.assign(file, cached);
        keys.push(key);
      } else toRead.push({ file, entry, language });
    }
  }
  let parsersUnavailable = false;
  let parsedCount = 0;
  for (let start = 0; start < toRead.length; start += WAVE) {
    signal?.throwIfAborted();
    const wave = toRead.slice(start, start + WAVE);
    const pending: Pending[] = [];
    let next = 0;
    const reader = async () => {
      while (next < wave.length) {
        const item = wave[next++];
        if (!item) continue;
        const head = await readHead(root, item.file.path);
        if (head.text === undefined) {
          if (head.note) item.file.note = head.note;
          continue;
        }
        // A changed file has no blob yet: key it by its content, hashed the way git hashes a blob.
        const sha = modified.has(item.file.path) ? createHash("sha1").update(`blob ${Buffer.byteLength(head.text)}\0${head.text}`).digest("hex") : item.entry.sha;
        const key = `${sha}:${item.language ?? "regex"}`;
        const generated = generatedReason(item.file.path, head.text);
        if (generated) {
          const entry: CachedTags = { generated: true, note: generated };
          Object.assign(item.file, entry);
          remember(key, entry);
          keys.push(key);
          parsedCount++;
          continue;
        }
        pending.push({ file: item.file, key, language: item.language, text: head.text, large: head.large === true, ...(head.note ? { note: head.note } : {}) });
      }
    };
    await Promise.all(Array.from({ length: READ_CONCURRENCY }, reader));
    pending.sort((a, b) => (a.file.path < b.file.path ? -1 : 1));
    // A changed file whose content was seen before (the same edit, mapped again) comes from the cache.
    // A blob twice in the tree (vendored copies, boilerplate) is parsed once, and both files share its tags object.
    const firstOfBlob = new Set<string>();
    const copies: Pending[] = [];
    const unseen: Pending[] = [];
    for (const item of pending) {
      keys.push(item.key);
      const cached = cache.get(item.key);
      if (cached) Object.assign(item.file, cached);
      else if (firstOfBlob.has(item.key)) copies.push(item);
      else {
        firstOfBlob.add(item.key);
        unseen.push(item);
      }
    }
    const parsed = unseen.filter((item) => item.language !== undefined);
    const jobs: ParseJob[] = parsed.flatMap((item) => (item.language ? [{ language: item.language, text: item.text }] : []));
    const outcomes = jobs.length > 0 && !parsersUnavailable ? await parseInWorkers(jobs, signal) : undefined;
    if (jobs.length > 0 && !outcomes) parsersUnavailable = true;
    const parsedTags = new Map<Pending, FileTags>();
    parsed.forEach((item, index) => {
      const outcome = outcomes?.[index];
      if (outcome && !("error" in outcome)) parsedTags.set(item, outcome);
      else if (outcome) item.note = `not parsed: ${outcome.error}`;
    });
    for (const item of unseen) {
      parsedCount++;
      const tags = parsedTags.get(item) ?? regexTags(item.file.path, item.text);
      const entry: CachedTags = { ...(tags ? { tags } : {}), ...(item.note ? { note: item.note } : {}), ...(item.large ? { large: true } : {}) };
      Object.assign(item.file, entry);
      remember(item.key, entry);
    }
    for (const item of copies) {
      const entry = cache.get(item.key);
      if (entry) Object.assign(item.file, entry);
    }
  }
  // A cache that cannot be written leaves the map whole: the map says so rather than failing.
  const cacheError = cacheDir && !parsersUnavailable ? await persistIfDue(cacheDir, keys, parsedCount).then(() => undefined, (error: unknown) => (error instanceof Error ? error.message : String(error))) : undefined;
  return { files, parsersUnavailable, parsed: parsedCount, generated: files.filter((file) => file.generated).length, ...(cacheError ? { cacheError } : {}) };
}

/** Writes the tags of the tree just mapped beside the mirror once enough files were parsed since the last write. */
async function persistIfDue(cacheDir: string, keys: string[], parsedNow: number): Promise<void> {
  const unsaved = (unsavedParses.get(cacheDir) ?? 0) + parsedNow;
  if (unsaved < PERSIST_AFTER) {
    unsavedParses.set(cacheDir, unsaved);
    return;
  }
  const entries: Array<[string, CachedTags]> = [];
  for (const key of keys.sort()) {
    const value = cache.get(key);
    if (value) entries.push([key, value]);
  }
  await persistTags(cacheDir, entries);
  unsavedParses.set(cacheDir, 0);
}

function remember(key: string, value: CachedTags): void {
  if (cache.size >= MAX_CACHED) {
    const oldest = cache.keys().next();
    if (!oldest.done) cache.delete(oldest.value);
  }
  cache.set(key, value);
}

/** Forgets every cached tag (tests measure cold maps with it). */
export function clearTagCache(): void {
  cache.clear();
  // A fresh start, like a new process: the next map with a cache directory reads it again.
  loadedDirs.clear();
  unsavedParses.clear();
}
