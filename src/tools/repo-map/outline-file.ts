import { extractSymbols } from "../extract-symbols.js";
import type { CachedTags } from "./disk-cache.js";
import { generatedReason } from "./generated.js";
import type { ParsedLanguage } from "./queries.js";
import { BINARY_NOTE, type FileHead, type HeadReader } from "./read-head.js";
import { countLines, normaliseTags, signatureLine, type FileTags } from "./tags.js";

/**
 * One file to outline: read from the workspace, unless the caller had to read it already (a changed file, keyed by its
 * content).
 */
export interface OutlineJob {
  path: string;
  /** The parsed language, or undefined for the regex outline. */
  language?: ParsedLanguage;
  head?: FileHead;
}

export type ParseFile = (language: ParsedLanguage, text: string) => Promise<FileTags>;

/**
 * What one file gives the map: its tags (parsed where `parse` is given and the language has a
 * grammar, else the regex outline), or why it has none (unreadable, binary, minified or generated).
 */
export async function outlineFile(
  reader: HeadReader,
  job: OutlineJob,
  parse: ParseFile | undefined,
): Promise<CachedTags> {
  const head = job.head ?? reader.read(job.path);
  if (head.text === undefined) {
    if (head.note === BINARY_NOTE) return { note: head.note };
    return { ...(head.note ? { note: head.note } : {}), worktree: true };
  }
  const generated = generatedReason(job.path, head.text, head.tail);
  if (generated) return { generated: true, note: generated };
  let note = head.note;
  let tags: FileTags | undefined;
  if (parse && job.language) {
    try {
      tags = await parse(job.language, head.text);
    } catch (error) {
      note = `not parsed: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  tags ??= regexTags(job.path, head.text);
  return { ...(tags ? { tags } : {}), ...(note ? { note } : {}), ...(head.large ? { large: true } : {}) };
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
  return normaliseTags("regex", definitions, counts, countLines(text));
}
