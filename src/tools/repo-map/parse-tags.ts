import { createRequire } from "node:module";
import { Language, Parser, Query } from "web-tree-sitter";
import { PARSED_LANGUAGES, type ParsedLanguage } from "./queries.js";
import { normaliseTags, signatureLine, type Definition, type FileTags } from "./tags.js";

interface LoadedLanguage {
  language: Language;
  query: Query;
}

const require = createRequire(import.meta.url);
/** What a method call on some object (`x.push()`) counts, against 1 for a plain reference. */
const MEMBER_REFERENCE = 0.25;
const loaded = new Map<ParsedLanguage, Promise<LoadedLanguage>>();
let parser: Promise<Parser> | undefined;

async function newParser(): Promise<Parser> {
  await Parser.init();
  return new Parser();
}

async function loadLanguage(name: ParsedLanguage): Promise<LoadedLanguage> {
  const { grammar, query } = PARSED_LANGUAGES[name];
  await (parser ??= newParser());
  const language = await Language.load(require.resolve(`@repomix/tree-sitter-wasms/out/${grammar}`));
  return { language, query: new Query(language, query) };
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
  const lines = text.split("\n");
  const definitions: Definition[] = [];
  const counts = new Map<string, number>();
  try {
    for (const capture of query.captures(tree.rootNode)) {
      const name = capture.node.text;
      if (name === "" || name.length > 100 || /\s/.test(name)) continue;
      if (capture.name === "reference" || capture.name === "reference.member") {
        counts.set(name, (counts.get(name) ?? 0) + (capture.name === "reference" ? 1 : MEMBER_REFERENCE));
      } else if (capture.name.startsWith("definition.")) {
        const row = capture.node.startPosition.row;
        definitions.push({ name, kind: capture.name.slice("definition.".length), line: row + 1, signature: signatureLine(lines[row] ?? "") });
      }
    }
  } finally {
    tree.delete();
  }
  // A definition's own name is not a use of it.
  for (const definition of definitions) {
    const count = counts.get(definition.name);
    if (count !== undefined) count <= 1 ? counts.delete(definition.name) : counts.set(definition.name, count - 1);
  }
  return normaliseTags("parser", definitions, counts, lines.length - (text.endsWith("\n") ? 1 : 0));
}
