/**
 * Line-based outlines of source files for repo_map: top-level declarations (and the direct members
 * of classes, impls and traits) with their line numbers. repo_map's fallback for languages without
 * a tree-sitter grammar here (Kotlin), and for every language where parsers cannot run (the Action).
 * Regexes over formatted code, not a parser: good enough to orient an agent, cheap, and no native
 * or WASM dependency. A miss only means a symbol is not listed; read_file shows the truth.
 */

export interface SourceSymbol {
  /** 1-based. */
  line: number;
  kind: string;
  name: string;
  /** A method or other member, listed under the declaration that contains it. */
  member: boolean;
}

export interface SourceOutline {
  symbols: SourceSymbol[];
}

interface SymbolPattern {
  kind: string;
  /** Must capture `name`; may capture `recv` (a Go method's receiver) or `kind`. */
  regex: RegExp;
  /** Its direct members are outlined too. */
  container?: boolean;
}

interface LanguageRules {
  /** Declarations at the left margin. */
  topLevel: SymbolPattern[];
  /** Declarations one level inside a container. */
  members?: SymbolPattern[];
  /** Declarations count at any indentation (Ruby nests classes in modules). */
  anyIndent?: boolean;
}

const JS_MODIFIERS =
  "(?:(?:public|private|protected|static|readonly|override|abstract|async|declare|get|set|accessor)\\s+)*";
const JAVA_MODIFIERS =
  "(?:(?:public|protected|private|static|final|abstract|synchronized|native|default|strictfp|sealed|non-sealed|transient)\\s+)*";
const KOTLIN_MODIFIERS =
  "(?:(?:public|private|protected|internal|open|abstract|sealed|data|enum|annotation|inner|value|inline|override|suspend|operator|infix|tailrec|external|const|lateinit)\\s+)*";
const RUST_VISIBILITY = "(?:pub(?:\\([^)]*\\))?\\s+)?";
/** A C/C++ function: return type, name, then either a whole signature or the first line of one. */
const C_FUNCTION =
  "(?:(?:static|inline|extern|virtual|explicit|constexpr|unsigned|signed|const|struct|enum)\\s+)*[A-Za-z_][\\w:<>,]*(?:\\s*[*&]+\\s*|\\s+)(?<name>[A-Za-z_~][\\w:~]*)\\s*\\((?:[^;{]*|.*\\)\\s*(?:const\\s*)?(?:override\\s*)?(?:noexcept\\s*)?(?:=\\s*0\\s*)?[;{]\\s*)$";

const TYPESCRIPT: LanguageRules = {
  topLevel: [
    {
      kind: "function",
      regex: /^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:async\s+)?function\s*\*?\s*(?<name>[A-Za-z_$][\w$]*)/,
    },
    {
      kind: "class",
      regex: /^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?class\s+(?<name>[A-Za-z_$][\w$]*)/,
      container: true,
    },
    { kind: "interface", regex: /^(?:export\s+)?(?:declare\s+)?interface\s+(?<name>[A-Za-z_$][\w$]*)/ },
    { kind: "type", regex: /^(?:export\s+)?(?:declare\s+)?type\s+(?<name>[A-Za-z_$][\w$]*)\s*(?:<.*>)?\s*=/ },
    { kind: "enum", regex: /^(?:export\s+)?(?:declare\s+)?(?:const\s+)?enum\s+(?<name>[A-Za-z_$][\w$]*)/ },
    {
      kind: "function",
      regex:
        /^(?:export\s+)?(?:const|let|var)\s+(?<name>[A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>)/,
    },
    { kind: "const", regex: /^export\s+(?:declare\s+)?(?:const|let|var)\s+(?<name>[A-Za-z_$][\w$]*)/ },
    { kind: "export", regex: /^(?:module\.)?exports\.(?<name>[A-Za-z_$][\w$]*)\s*=/ },
  ],
  members: [
    {
      kind: "method",
      regex: new RegExp(`^\\s+${JS_MODIFIERS}\\*?(?<name>#?[A-Za-z_$][\\w$]*)\\s*(?:<[^>]*>)?\\s*\\(`),
    },
  ],
};

const PYTHON: LanguageRules = {
  topLevel: [
    { kind: "function", regex: /^(?:async\s+)?def\s+(?<name>\w+)\s*[([]/ },
    { kind: "class", regex: /^class\s+(?<name>\w+)\s*[:([]/, container: true },
    { kind: "const", regex: /^(?<name>[A-Z][A-Z0-9_]*)\s*(?::[^=]+)?=(?!=)/ },
  ],
  members: [{ kind: "method", regex: /^\s+(?:async\s+)?def\s+(?<name>\w+)\s*[([]/ }],
};

const GO: LanguageRules = {
  topLevel: [
    { kind: "method", regex: /^func\s+\((?<recv>[^)]*)\)\s*(?<name>\w+)/ },
    { kind: "function", regex: /^func\s+(?<name>\w+)/ },
    { kind: "type", regex: /^type\s+(?<name>\w+)(?:\[[^\]]*\])?\s+(?<kind>struct|interface)?/ },
    { kind: "const", regex: /^(?<kind>const|var)\s+(?<name>[A-Z]\w*)/ },
  ],
};

const RUST: LanguageRules = {
  topLevel: [
    {
      kind: "fn",
      regex: new RegExp(
        `^${RUST_VISIBILITY}(?:const\\s+)?(?:async\\s+)?(?:unsafe\\s+)?(?:extern\\s+"[^"]*"\\s+)?fn\\s+(?<name>\\w+)`,
      ),
    },
    { kind: "struct", regex: new RegExp(`^${RUST_VISIBILITY}struct\\s+(?<name>\\w+)`) },
    { kind: "enum", regex: new RegExp(`^${RUST_VISIBILITY}enum\\s+(?<name>\\w+)`) },
    { kind: "trait", regex: new RegExp(`^${RUST_VISIBILITY}(?:unsafe\\s+)?trait\\s+(?<name>\\w+)`), container: true },
    { kind: "type", regex: new RegExp(`^${RUST_VISIBILITY}type\\s+(?<name>\\w+)`) },
    { kind: "mod", regex: new RegExp(`^${RUST_VISIBILITY}mod\\s+(?<name>\\w+)`) },
    { kind: "const", regex: new RegExp(`^${RUST_VISIBILITY}(?:const|static)\\s+(?:mut\\s+)?(?<name>\\w+)`) },
    { kind: "macro", regex: /^macro_rules!\s*(?<name>\w+)/ },
    { kind: "impl", regex: /^(?:unsafe\s+)?impl(?:<.*?>)?\s+(?<name>[^{]+?)\s*(?:where\b.*)?\{?\s*$/, container: true },
  ],
  members: [
    {
      kind: "fn",
      regex: new RegExp(`^\\s+${RUST_VISIBILITY}(?:const\\s+)?(?:async\\s+)?(?:unsafe\\s+)?fn\\s+(?<name>\\w+)`),
    },
  ],
};

const JAVA: LanguageRules = {
  topLevel: [
    {
      kind: "class",
      regex: new RegExp(`^${JAVA_MODIFIERS}(?<kind>class|interface|enum|record|@interface)\\s+(?<name>\\w+)`),
      container: true,
    },
  ],
  members: [
    { kind: "class", regex: new RegExp(`^\\s+${JAVA_MODIFIERS}(?<kind>class|interface|enum|record)\\s+(?<name>\\w+)`) },
    {
      kind: "method",
      regex: new RegExp(
        `^\\s+${JAVA_MODIFIERS}(?:<[^>]+>\\s+)?[\\w.$]+(?:<[^()]*>)?(?:\\[\\])*\\s+(?<name>\\w+)\\s*\\(`,
      ),
    },
  ],
};

const KOTLIN: LanguageRules = {
  topLevel: [
    {
      kind: "class",
      regex: new RegExp(`^${KOTLIN_MODIFIERS}(?<kind>class|interface|object)\\s+(?<name>\\w+)`),
      container: true,
    },
    { kind: "fun", regex: new RegExp(`^${KOTLIN_MODIFIERS}fun\\s+(?:<[^>]*>\\s*)?(?:[\\w.]+\\.)?(?<name>\\w+)`) },
    { kind: "typealias", regex: new RegExp(`^${KOTLIN_MODIFIERS}typealias\\s+(?<name>\\w+)`) },
    { kind: "val", regex: new RegExp(`^${KOTLIN_MODIFIERS}(?<kind>val|var)\\s+(?<name>\\w+)`) },
  ],
  members: [
    { kind: "fun", regex: new RegExp(`^\\s+${KOTLIN_MODIFIERS}fun\\s+(?:<[^>]*>\\s*)?(?:[\\w.]+\\.)?(?<name>\\w+)`) },
    { kind: "class", regex: new RegExp(`^\\s+${KOTLIN_MODIFIERS}(?<kind>class|interface|object)\\s+(?<name>\\w+)`) },
  ],
};

const RUBY: LanguageRules = {
  topLevel: [
    { kind: "module", regex: /^\s*(?<kind>class|module)\s+(?<name>[A-Z][\w:]*)/ },
    { kind: "def", regex: /^\s*def\s+(?<name>(?:self\.)?[\w?!=]+)/ },
  ],
  anyIndent: true,
};

const C_FAMILY: LanguageRules = {
  topLevel: [
    {
      kind: "struct",
      regex:
        /^(?:typedef\s+)?(?:template\s*<.*>\s*)?(?<kind>struct|class|union|enum(?:\s+class)?)\s+(?<name>[A-Za-z_]\w*)\s*(?:final\s*)?(?::[^;{]*)?\{?\s*$/,
      container: true,
    },
    { kind: "macro", regex: /^#\s*define\s+(?<name>[A-Za-z_]\w*)/ },
    { kind: "typedef", regex: /^typedef\s+[^;(]*?\b(?<name>[A-Za-z_]\w*)\s*;/ },
    { kind: "function", regex: new RegExp(`^${C_FUNCTION}`) },
  ],
  members: [{ kind: "method", regex: new RegExp(`^\\s+${C_FUNCTION}`) }],
};

const LANGUAGES: Record<string, LanguageRules> = {
  ts: TYPESCRIPT,
  tsx: TYPESCRIPT,
  mts: TYPESCRIPT,
  cts: TYPESCRIPT,
  js: TYPESCRIPT,
  jsx: TYPESCRIPT,
  mjs: TYPESCRIPT,
  cjs: TYPESCRIPT,
  py: PYTHON,
  pyi: PYTHON,
  go: GO,
  rs: RUST,
  java: JAVA,
  kt: KOTLIN,
  kts: KOTLIN,
  rb: RUBY,
  rake: RUBY,
  h: C_FAMILY,
  hh: C_FAMILY,
  hpp: C_FAMILY,
  hxx: C_FAMILY,
  c: C_FAMILY,
  cc: C_FAMILY,
  cpp: C_FAMILY,
  cxx: C_FAMILY,
};

/** Words that look like a call or declaration to a regex but are control flow. */
const NOT_A_NAME = new Set([
  "if",
  "for",
  "while",
  "switch",
  "catch",
  "return",
  "throw",
  "else",
  "do",
  "try",
  "function",
  "sizeof",
  "typeof",
  "await",
  "yield",
  "super",
  "this",
  "synchronized",
  "elif",
  "with",
]);

/** Lines longer than this are minified or generated code, not declarations. */
const MAX_LINE_CHARS = 400;

function rulesFor(file: string): LanguageRules | undefined {
  const base = file.slice(file.lastIndexOf("/") + 1).toLowerCase();
  if (/\.min\.[cm]?js$/.test(base)) return undefined;
  const dot = base.lastIndexOf(".");
  return dot > 0 ? LANGUAGES[base.slice(dot + 1)] : undefined;
}

/** Whether repo_map outlines this file (a known source language); other files are listed by name. */
export function hasOutline(file: string): boolean {
  return rulesFor(file) !== undefined;
}

export function extractSymbols(file: string, text: string): SourceOutline | undefined {
  const rules = rulesFor(file);
  if (!rules) return undefined;
  const symbols: SourceSymbol[] = [];
  let container: { indent: number; memberIndent?: number } | null = null;
  const lines = text.split("\n");
  for (let index = 0; index < lines.length; index++) {
    const line = (lines[index] ?? "").replace(/\r$/, "");
    if (line.length > MAX_LINE_CHARS || line.trim() === "") continue;
    const indent = line.length - line.trimStart().length;
    if (container && indent <= container.indent) container = null;
    if (indent === 0 || rules.anyIndent) {
      const found = matchSymbol(rules.topLevel, line, index + 1, rules.anyIndent === true && indent > 0);
      if (found) {
        symbols.push(found.symbol);
        if (found.container) container = { indent };
        continue;
      }
    }
    if (container && rules.members) {
      container.memberIndent ??= indent;
      if (indent !== container.memberIndent) continue;
      const found = matchSymbol(rules.members, line, index + 1, true);
      if (found) symbols.push(found.symbol);
    }
  }
  return { symbols };
}

function matchSymbol(
  patterns: SymbolPattern[],
  line: string,
  lineNumber: number,
  member: boolean,
): { symbol: SourceSymbol; container: boolean } | undefined {
  for (const pattern of patterns) {
    const groups = pattern.regex.exec(line)?.groups;
    const rawName = groups?.name;
    if (!groups || !rawName || NOT_A_NAME.has(rawName)) continue;
    const receiver = groups.recv ? receiverType(groups.recv) : "";
    const name = receiver ? `${receiver}.${rawName}` : rawName.replace(/\s+/g, " ");
    const kind = groups.kind ? groups.kind.replace(/\s+/g, " ") : pattern.kind;
    return { symbol: { line: lineNumber, kind, name, member }, container: pattern.container === true };
  }
  return undefined;
}

/** `r *Repo[T]` → `Repo`. */
function receiverType(receiver: string): string {
  const type = receiver.trim().split(/\s+/).pop() ?? "";
  return type.replace(/^\*/, "").replace(/\[.*$/, "");
}
