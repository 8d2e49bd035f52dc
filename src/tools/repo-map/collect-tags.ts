import { createHash } from "node:crypto";
import { untilAborted } from "../../shared/deadline.js";
import { gitFailure, gitRead } from "../git-read.js";
import { hasOutline } from "../extract-symbols.js";
import { BESIDE_DECLARATIONS_NOTE, compiledBesideDeclarations } from "./generated.js";
import { parsedLanguageOf } from "./queries.js";
import { loadPersistedTags, persistTags, type CachedTags } from "./disk-cache.js";
import { outlineFile, type OutlineJob } from "./outline-file.js";
import { HeadReader } from "./read-head.js";
import { outlineInWorkers, startParserWorkers } from "./tag-pool.js";
import type { FileTags } from "./tags.js";

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
/**
 * Per cache directory: files parsed since its file was last written. A one-file change does not rewrite it; a push
 * does.
 */
const unsavedParses = new Map<string, number>();
const PERSIST_AFTER = 32;

interface TrackedEntry {
  path: string;
  mode: string;
  sha: string;
}

interface Tracked {
  entries: TrackedEntry[];
  modified: Set<string>;
  /**
   * JavaScript the listing shows to be compiled output (see compiledBesideDeclarations): listed by name, never read.
   */
  compiled: Set<string>;
}

/**
 * The last listing, by git's own output: a warm map usually lists the same tree (a changed file is listed the same
 * however often it changes).
 */
let lastListing: { root: string; stdout: string; tracked: Tracked } | undefined;
/**
 * The files of the last map, one per entry of its listing: a map of the same listing takes those of unchanged files as
 * they are.
 */
let lastTree: { tracked: Tracked; files: RepoFile[]; keys: Array<string | undefined> } | undefined;

/**
 * The tracked files with their blob SHAs, from the index, and those changed in the working tree:
 * one `git ls-files -t -c -m -s` (a spawned git is a good part of a warm map), where `H` tags a
 * cached entry and `C` a changed one.
 */
async function listTracked(root: string): Promise<Tracked> {
  const listed = await gitRead(root, ["ls-files", "-t", "-c", "-m", "-s", "-z", "--full-name"]);
  if (listed.code !== 0) throw new Error(gitFailure(listed, "ls-files"));
  if (lastListing?.root === root && lastListing.stdout === listed.stdout) return lastListing.tracked;
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
  const tracked = { entries, modified, compiled: compiledBesideDeclarations(entries.map((entry) => entry.path)) };
  lastListing = { root, stdout: listed.stdout, tracked };
  return tracked;
}

/**
 * Per worktree: when the collections running now are over (settled, never rejected). Another for the
 * same tree waits for that and then finds their tags cached, rather than parsing them twice.
 */
const running = new Map<string, Promise<unknown>>();

/** Tags for every tracked file: from the cache by blob SHA, else read and outlined on worker threads. */
export async function collectTags(root: string, signal?: AbortSignal, cacheDir?: string): Promise<CollectedTags> {
  const before = running.get(root);
  const work = (async () => {
    // Its outcome is its caller's; this one only waits its turn, and no longer than its own signal allows.
    if (before) await (signal ? untilAborted(before, signal) : before);
    signal?.throwIfAborted();
    return collectNow(root, signal, cacheDir);
  })();
  // The next waits for this one and for the one before it (this one may give up waiting early).
  const tail = Promise.allSettled([before, work]);
  running.set(root, tail);
  try {
    return await work;
  } finally {
    void tail.then(() => {
      if (running.get(root) === tail) running.delete(root);
    });
  }
}

/** Per blob key not cached: the job outlining it and every file holding that blob. */
type OutlineQueue = Map<string, { job: OutlineJob; files: RepoFile[] }>;

/** The files of one listing, each keyed by its blob (when outlined), and the blobs still to outline. */
interface FilePlan {
  files: RepoFile[];
  keys: Array<string | undefined>;
  queued: OutlineQueue;
}

async function collectNow(
  root: string,
  signal: AbortSignal | undefined,
  cacheDir: string | undefined,
): Promise<CollectedTags> {
  if (!lastTree) startParserWorkers();
  const tracked = await listTrackedAndLoadCache(root, cacheDir);
  const previous = lastTree?.tracked === tracked ? lastTree : undefined;
  const reader = new HeadReader(root);
  const { files, keys, queued } = planFiles(tracked, previous, reader);
  signal?.throwIfAborted();
  const blobs = [...queued];
  const jobs = blobs.map(([, blob]) => blob.job);
  const outcomes = jobs.length > 0 ? await outlineInWorkers(root, jobs, signal) : [];
  // No worker here (the Action bundle): the regex outline, on this thread.
  const parsersUnavailable = outcomes === undefined;
  const tagged = outcomes ?? (await outlineHere(reader, jobs, signal));
  const fromWorktree = applyOutlines(blobs, tagged);
  // Without parsers the files got the regex outline: not what a later map with parsers should reuse. Nor
  // are files the worktree kept from being read: the next map looks at them again.
  lastTree = parsersUnavailable || fromWorktree ? undefined : { tracked, files, keys };
  const cacheError =
    cacheDir && !parsersUnavailable ? await persistReportingError(cacheDir, keys, blobs.length) : undefined;
  return {
    files,
    parsersUnavailable,
    parsed: blobs.length,
    generated: files.filter((file) => file.generated).length,
    ...(cacheError ? { cacheError } : {}),
  };
}

/** Lists the tracked files and, the first time a cache directory is seen, reads its tags into the cache. */
async function listTrackedAndLoadCache(root: string, cacheDir: string | undefined): Promise<Tracked> {
  const [tracked, persisted] = await Promise.all([
    listTracked(root),
    cacheDir && !loadedDirs.has(cacheDir) ? loadPersistedTags(cacheDir) : undefined,
  ]);
  if (cacheDir && persisted) {
    loadedDirs.add(cacheDir);
    for (const [key, value] of persisted) if (!cache.has(key)) remember(key, value);
    // Nothing on disk yet: the first map writes it, however few files it parsed.
    if (persisted.size === 0) unsavedParses.set(cacheDir, PERSIST_AFTER);
  }
  return tracked;
}

/**
 * One file per listed entry: unchanged ones from the previous map as they are, the rest from the cache or queued to be
 * outlined.
 */
function planFiles(tracked: Tracked, previous: typeof lastTree, reader: HeadReader): FilePlan {
  const { entries, modified } = tracked;
  const files: RepoFile[] = [];
  const keys: Array<string | undefined> = [];
  // Per blob key not cached: the job outlining it and every file holding that blob (vendored copies share one parse and
  // one tags object).
  const queued: OutlineQueue = new Map();
  entries.forEach((entry, index) => {
    const unchanged = previous && !modified.has(entry.path) ? previous.files[index] : undefined;
    if (previous && unchanged) {
      files.push(unchanged);
      keys.push(previous.keys[index]);
      return;
    }
    const file: RepoFile = { path: entry.path };
    files.push(file);
    keys.push(undefined);
    if (entry.mode === "120000") file.note = "symbolic link";
    else if (entry.mode === "160000") file.note = "submodule";
    else if (tracked.compiled.has(entry.path)) Object.assign(file, { generated: true, note: BESIDE_DECLARATIONS_NOTE });
    else keys[index] = planOutline(entry, file, modified.has(entry.path), reader, queued);
  });
  return { files, keys, queued };
}

/**
 * Gives a file its cached tags or queues its blob to be outlined; returns the blob's key, or undefined when the file is
 * not outlined at all.
 */
function planOutline(
  entry: TrackedEntry,
  file: RepoFile,
  isModified: boolean,
  reader: HeadReader,
  queued: OutlineQueue,
): string | undefined {
  const language = parsedLanguageOf(entry.path);
  if (!language && !hasOutline(entry.path)) return undefined;
  const job: OutlineJob = { path: entry.path, ...(language ? { language } : {}) };
  let sha = entry.sha;
  if (isModified) {
    // A changed file has no blob yet: key it by its content, hashed the way git hashes a blob.
    const head = reader.read(entry.path);
    if (head.text === undefined) {
      if (head.note) file.note = head.note;
      return undefined;
    }
    job.head = head;
    sha = createHash("sha1")
      .update(`blob ${Buffer.byteLength(head.text)}\0${head.text}`)
      .digest("hex");
  }
  const key = `${sha}:${language ?? "regex"}`;
  const cached = cache.get(key);
  if (cached) Object.assign(file, cached);
  else {
    const blob = queued.get(key);
    if (blob) blob.files.push(file);
    else queued.set(key, { job, files: [file] });
  }
  return key;
}

/** Gives each queued blob's files their tags and caches them; returns whether any came from the worktree. */
function applyOutlines(blobs: Array<[string, { job: OutlineJob; files: RepoFile[] }]>, tagged: CachedTags[]): boolean {
  let fromWorktree = false;
  blobs.forEach(([key, blob], index) => {
    const { worktree, ...entry } = tagged[index] ?? {};
    for (const file of blob.files) Object.assign(file, entry);
    // What the worktree gave rather than the blob (a file gone mid-map, unreadable, behind a link) is not the blob's to
    // keep.
    if (worktree) fromWorktree = true;
    else remember(key, entry);
  });
  return fromWorktree;
}

/** A cache that cannot be written leaves the map whole: the map says so rather than failing. */
function persistReportingError(
  cacheDir: string,
  keys: Array<string | undefined>,
  parsedNow: number,
): Promise<string | undefined> {
  return persistIfDue(cacheDir, keys, parsedNow).then(
    () => undefined,
    (error: unknown) => (error instanceof Error ? error.message : String(error)),
  );
}

/** Outlines on the main thread by regular expressions, yielding to the event loop between files now and then. */
async function outlineHere(reader: HeadReader, jobs: OutlineJob[], signal?: AbortSignal): Promise<CachedTags[]> {
  const outcomes: CachedTags[] = [];
  for (const job of jobs) {
    if (outcomes.length % 64 === 63) {
      await new Promise((resolve) => setImmediate(resolve));
      signal?.throwIfAborted();
    }
    outcomes.push(await outlineFile(reader, job, undefined));
  }
  return outcomes;
}

/** Writes the tags of the tree just mapped beside the mirror once enough files were parsed since the last write. */
async function persistIfDue(cacheDir: string, keys: Array<string | undefined>, parsedNow: number): Promise<void> {
  const unsaved = (unsavedParses.get(cacheDir) ?? 0) + parsedNow;
  if (unsaved < PERSIST_AFTER) {
    unsavedParses.set(cacheDir, unsaved);
    return;
  }
  const entries: Array<[string, CachedTags]> = [];
  for (const key of keys.filter((key) => key !== undefined).sort()) {
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
  lastTree = undefined;
  lastListing = undefined;
  // A fresh start, like a new process: the next map with a cache directory reads it again.
  loadedDirs.clear();
  unsavedParses.clear();
}
