import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { gunzipSync } from "node:zlib";
import { Language, Parser, Query } from "web-tree-sitter";
import { PARSED_LANGUAGES, type ParsedLanguage } from "./queries.js";
import { countLines, normaliseTags, signatureLine, type Definition, type FileTags } from "./tags.js";

interface LoadedLanguage {
  language: Language;
  query: Query;
}

const require = createRequire(import.meta.url);
/** What a method call on some object (`x.push()`) counts, against 1 for a plain reference. */
const MEMBER_REFERENCE = 0.25;
const loaded = new Map<ParsedLanguage, Promise<LoadedLanguage>>();
let parser: Promise<Parser> | undefined;

/**
 * A WebAssembly file gzipped in grammars/ beside this module: where the Action's bundle, which has
 * no node_modules, carries the grammars and the parser runtime (scripts/build-action.mjs puts them
 * there). Undefined elsewhere: built (lib/) or from source, the packages provide them.
 */
function bundledWasm(file: string): Uint8Array | undefined {
  const url = new URL(`./grammars/${file}.gz`, import.meta.url);
  if (url.protocol !== "file:" || !existsSync(url)) return undefined;
  return gunzipSync(readFileSync(url));
}

async function newParser(): Promise<Parser> {
  const runtime = bundledWasm("web-tree-sitter.wasm");
  await Parser.init(runtime ? { wasmBinary: runtime } : undefined);
  return new Parser();
}

async function loadLanguage(name: ParsedLanguage): Promise<LoadedLanguage> {
  const { grammar, query } = PARSED_LANGUAGES[name];
  await (parser ??= newParser());
  const language = await Language.load(
    bundledWasm(grammar) ?? require.resolve(`@repomix/tree-sitter-wasms/out/${grammar}`),
  );
  return { language, query: new Query(language, query) };
}

/** Loads the parser runtime now, so that the first file does not wait for it. */
export function prepareParser(): void {
  parser ??= newParser();
  // Not handled here: each parse awaits the same promise and reports a failure as that file's note.
  parser.catch(() => undefined);
}

/** Parses one file and runs its language's tags query. */
export async function parseTags(name: ParsedLanguage, text: string): Promise<FileTags> {
  const instance = await (parser ??= newParser());
  let entry = loaded.get(name);
  if (!entry) {
    entry = loadLanguage(name);
    loaded.set(name, entry);
  }
  const { language, query } = await entry;
  instance.setLanguage(language);
  const tree = instance.parse(text);
  if (!tree) throw new Error(`tree-sitter could not parse this ${name} file`);
  const definitions: Definition[] = [];
  // Per node: its name and whether any pattern saw it as a member (`z.output`, `x.parse()`): that reading wins.
  const references = new Map<number, { name: string; member: boolean }>();
  const definitionNodes = new Set<number>();
  try {
    for (const capture of query.captures(tree.rootNode)) {
      const name = capture.node.text;
      if (name === "" || name.length > 100 || /\s/.test(name)) continue;
      if (capture.name === "reference" || capture.name === "reference.member") {
        const seen = references.get(capture.node.id);
        references.set(capture.node.id, { name, member: capture.name === "reference.member" || seen?.member === true });
      } else if (capture.name.startsWith("definition.")) {
        definitionNodes.add(capture.node.id);
        definitions.push({
          name,
          kind: capture.name.slice("definition.".length),
          line: capture.node.startPosition.row + 1,
          signature: signatureLine(lineAt(text, capture.node.startIndex)),
        });
      }
    }
  } finally {
    tree.delete();
  }
  const counts = new Map<string, number>();
  for (const [id, { name, member }] of references) {
    // A definition's own name is not a use of it.
    if (definitionNodes.has(id)) continue;
    // `x.get()`, `x.push()`: a short, plain method name on some object says nothing about where it is defined.
    if (member && name.length < 8 && !/[a-z][A-Z]|[A-Za-z]_[A-Za-z]/.test(name)) continue;
    counts.set(name, (counts.get(name) ?? 0) + (member ? MEMBER_REFERENCE : 1));
  }
  return normaliseTags("parser", definitions, counts, countLines(text));
}

/**
 * The line holding the character at `index` (tree-sitter's indices count UTF-16 code units, as JavaScript strings do).
 */
function lineAt(text: string, index: number): string {
  const end = text.indexOf("\n", index);
  return text.slice(index > 0 ? text.lastIndexOf("\n", index - 1) + 1 : 0, end < 0 ? text.length : end);
}
