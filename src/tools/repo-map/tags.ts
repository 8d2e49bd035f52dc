/**
 * What repo_map learns from one file: its definitions and the names it uses. Plain data, so it crosses a worker
 * boundary and is cached by blob SHA.
 */
export interface Definition {
  name: string;
  /** function, class, method, … (the query's or the regex outline's word). */
  kind: string;
  /** 1-based. */
  line: number;
  /** The source line the definition starts on, right-trimmed and capped. */
  signature: string;
}

export interface FileTags {
  /** How the tags were found: a tree-sitter parse, or the regex outline for other languages. */
  source: "parser" | "regex";
  definitions: Definition[];
  /** Each identifier the file uses, with how often (a method call on an object counts less), sorted by name. */
  references: Array<[name: string, count: number]>;
  lineCount: number;
}

const MAX_SIGNATURE_CHARS = 160;

/** Lines of the text, a last line without its newline included (an empty text is one empty line). */
export function countLines(text: string): number {
  let lines = text.endsWith("\n") ? 0 : 1;
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) lines++;
  return lines;
}

/** The line as shown in the map: tabs as two spaces, trailing space dropped, long lines cut. */
export function signatureLine(line: string): string {
  const text = line.replaceAll("\t", "  ").trimEnd();
  return text.length > MAX_SIGNATURE_CHARS ? `${text.slice(0, MAX_SIGNATURE_CHARS - 1)}…` : text;
}

/**
 * A name bound to a module (`const commander = require("../")`, `x = importlib.import_module("y")`):
 * an import, not a definition. A test file whose only "definition" is one would fill the map with
 * lines that say nothing of the code.
 */
const IMPORT_BINDING =
  /^\s*(?:export\s+)?(?:(?:const|let|var)\s+)?[\w$]+\s*=\s*(?:await\s+)?(?:require|import|importlib\.import_module|__import__)\s*\(/;

/**
 * Definitions in line order, one per (name, line), imports left out, and references sorted: the same input always gives
 * the same tags.
 */
export function normaliseTags(
  source: FileTags["source"],
  definitions: Definition[],
  counts: Map<string, number>,
  lineCount: number,
): FileTags {
  const seen = new Set<string>();
  const unique = definitions
    .filter((definition) => !IMPORT_BINDING.test(definition.signature))
    .sort((a, b) => a.line - b.line || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .filter((definition) => {
      const key = `${definition.line}\0${definition.name}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  const references = [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { source, definitions: unique, references, lineCount };
}
