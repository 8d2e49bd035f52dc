import { createHash, randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { promises as fs, readFileSync } from "node:fs";
import path from "node:path";
import { PARSED_LANGUAGES } from "./queries.js";
import type { FileTags } from "./tags.js";

/** What one blob gave (see collect-tags.ts): its tags, or only why it has none. */
export interface CachedTags {
  tags?: FileTags;
  generated?: boolean;
  note?: string;
  large?: boolean;
  /** The note is the worktree's, not the blob's (gone, unreadable, behind a link): never kept in the cache. */
  worktree?: true;
}

/**
 * Bumped when what a parse produces changes in a way the grammar and query text do not show (3: a 64 KB head, data
 * tables and big compiled files left unparsed; 4: CommonJS compiler output left unparsed).
 */
const FORMAT = 5;
/** A repository's cache file holds the blobs of the last trees mapped, up to this many. */
const MAX_PERSISTED_BLOBS = 100_000;

const require = createRequire(import.meta.url);

/**
 * Tags depend on the grammars, the queries and this code's format: a cache file written by another
 * version is named differently and never read.
 */
const VERSION = createHash("sha256")
  .update(
    JSON.stringify({
      FORMAT,
      queries: PARSED_LANGUAGES,
      grammars: packageVersion("@repomix/tree-sitter-wasms"),
      parser: packageVersion("web-tree-sitter"),
    }),
  )
  .digest("hex")
  .slice(0, 16);

function packageVersion(name: string): string {
  const version = (file: string): unknown => {
    const manifest: unknown = JSON.parse(readFileSync(file, "utf8"));
    return typeof manifest === "object" && manifest !== null && "version" in manifest ? manifest.version : undefined;
  };
  for (const manifest of [
    () => require.resolve(`${name}/package.json`),
    () => path.join(path.dirname(require.resolve(name)), "package.json"),
  ]) {
    try {
      const found = version(manifest());
      return typeof found === "string" ? found : "unknown";
    } catch {
      // Not exported (web-tree-sitter exports no package.json), or not installed: the next way.
    }
  }
  // The Action bundle has no node_modules: scripts/build-action.mjs wrote the versions beside it.
  try {
    const bundled = JSON.parse(readFileSync(new URL("./grammars/versions.json", import.meta.url), "utf8")) as Record<
      string,
      unknown
    >;
    const found = bundled[name];
    return typeof found === "string" ? found : "unknown";
  } catch {
    return "unavailable";
  }
}

export function cacheFile(dir: string): string {
  return path.join(dir, `repo-map-tags-${VERSION}.json`);
}

/**
 * The persisted tags of a repository, by blob key, or an empty map when there are none (or they are
 * unreadable: the file is only a cache, and a map without it is merely cold).
 */
export async function loadPersistedTags(dir: string): Promise<Map<string, CachedTags>> {
  let text: string;
  try {
    text = await fs.readFile(cacheFile(dir), "utf8");
  } catch {
    return new Map();
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return new Map();
  }
  const loaded = new Map<string, CachedTags>();
  if (!Array.isArray(parsed)) return loaded;
  for (const entry of parsed) {
    if (!Array.isArray(entry) || entry.length !== 2) continue;
    const [key, value]: unknown[] = entry;
    if (typeof key === "string" && isCachedTags(value)) loaded.set(key, value);
  }
  return loaded;
}

/**
 * A shape check of each entry: the file is ours, outside the sandbox, but a torn or foreign file must not crash a map.
 */
function isCachedTags(value: unknown): value is CachedTags {
  if (typeof value !== "object" || value === null) return false;
  if (!("tags" in value)) return true;
  const tags = value.tags;
  return (
    typeof tags === "object" &&
    tags !== null &&
    "definitions" in tags &&
    Array.isArray(tags.definitions) &&
    "references" in tags &&
    Array.isArray(tags.references) &&
    "lineCount" in tags &&
    typeof tags.lineCount === "number" &&
    "source" in tags &&
    (tags.source === "parser" || tags.source === "regex")
  );
}

/** Writes the tags atomically (a temporary file renamed over the old one), so a reader never sees half a file. */
export async function persistTags(dir: string, entries: Array<[string, CachedTags]>): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const target = cacheFile(dir);
  const temporary = `${target}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    await fs.writeFile(temporary, JSON.stringify(entries.slice(0, MAX_PERSISTED_BLOBS)), { mode: 0o600 });
    await fs.rename(temporary, target);
  } catch (error) {
    await fs.rm(temporary, { force: true });
    throw error;
  }
}
