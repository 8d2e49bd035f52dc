import { TAIL_BYTES } from "./read-head.js";
import { countLines } from "./tags.js";

/** Files at least this big are judged by their line length; smaller ones cost little to outline. */
const MIN_JUDGED_BYTES = 16 * 1024;
/**
 * Hand-written code averages well under 80 characters a line, long re-export lists a few hundred; minified bundles run
 * to thousands.
 */
const MAX_AVERAGE_LINE = 1000;
const MINIFIED_NAME = /\.min\.[cm]?[jt]sx?$|[.-]bundle\.[cm]?js$/;
/**
 * What compilers and bundlers write last in their output (tsc, esbuild, Babel, sass…): the file has its source
 * elsewhere.
 */
const SOURCE_MAP_TRAILER = /(?:^|\n)[ \t]*(?:\/\/[#@] sourceMappingURL=\S*|\/\*[#@] sourceMappingURL=[^*]*\*\/)\s*$/;
/**
 * What compilers write first in CommonJS output: the `__esModule` flag (TypeScript's and Babel's
 * module transforms) or esbuild's helper prologue. Nobody writes these by hand; the source is elsewhere.
 */
const COMPILER_PROLOGUE =
  /^(?:Object\.defineProperty\(exports, ["']__esModule["'], \{ value: true \}\);|var __defProp = Object\.defineProperty;$)/m;
/** Go's convention (`// Code generated … DO NOT EDIT.`) and `@generated`, in a comment near the top. */
const GENERATED_HEADER = /^[ \t]*(?:\/\/|\/\*|\*|#).*(?:\bCode generated\b.*\bDO NOT EDIT\b|@generated\b)/m;
/**
 * A literal value on one line: a quoted string, a number, or true/false/null and their kin (each alternative is
 * unambiguous: no backtracking blow-up).
 */
const LITERAL = /"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|\b(?:true|false|null|nil|None|True|False)\b|-?\b\d[\w.+-]*/g;
/** What is left of a line of data once its literals are replaced by 0: separators and brackets. */
const DATA_LINE = /^[\s0,:;()[\]{}]*$/;
/**
 * Of every ten written lines, how many hold only literal values when a file is data rather than code (word lists,
 * lookup tables, fixtures).
 */
const DATA_LINES_IN_TEN = 9;

/** JavaScript, by extension, and the declaration files TypeScript writes beside it (`x.mjs` → `x.d.mts`). */
const JAVASCRIPT = /\.([cm]?)js$/;
export const BESIDE_DECLARATIONS_NOTE =
  "compiled output (its folder's JavaScript all has declarations beside it); not outlined";

/**
 * The JavaScript files among `paths` that are a compiler's output, told from the listing alone: a
 * folder of at least two JavaScript files where each has a declaration file of the same name beside
 * it (`index.js` and `index.d.ts`) is what `tsc` writes. The declarations carry the same definitions
 * with their types, so the map outlines those and lists the JavaScript by name: outlining both
 * would show every definition twice. A lone `index.js` with a hand-written `index.d.ts`, or a
 * folder where some JavaScript has no declarations, is outlined as usual.
 */
export function compiledBesideDeclarations(paths: readonly string[]): Set<string> {
  const tracked = new Set(paths);
  const folders = new Map<string, { files: string[]; declared: boolean }>();
  for (const path of paths) {
    const js = JAVASCRIPT.exec(path);
    if (!js) continue;
    const name = path.slice(0, path.lastIndexOf("/") + 1);
    let folder = folders.get(name);
    if (!folder) folders.set(name, (folder = { files: [], declared: true }));
    folder.files.push(path);
    const stem = path.slice(0, js.index);
    if (!tracked.has(`${stem}.d.${js[1]}ts`) && !tracked.has(`${stem}.d.ts`)) folder.declared = false;
  }
  const compiled = new Set<string>();
  for (const folder of folders.values())
    if (folder.declared && folder.files.length >= 2) for (const path of folder.files) compiled.add(path);
  return compiled;
}

/**
 * Why a file is left unoutlined as minified, generated or data, or undefined for source worth
 * outlining. Such files cost most of a cold map's parsing and add only noise (one-letter names,
 * thousands of definitions nobody reads, copies of definitions whose source is elsewhere, or no
 * definitions at all); they stay in the map by name. `tail` is the file's end when `text` is only its head.
 */
export function generatedReason(path: string, text: string, tail = text.slice(-TAIL_BYTES)): string | undefined {
  if (MINIFIED_NAME.test(path)) return "minified; not outlined";
  if (SOURCE_MAP_TRAILER.test(tail)) return "compiled output (it names a source map); not outlined";
  const top = text.slice(0, 1024);
  if (COMPILER_PROLOGUE.test(top)) return "compiled output (a compiler's CommonJS prologue); not outlined";
  if (GENERATED_HEADER.test(top)) return "generated (its header says so); not outlined";
  if (text.length < MIN_JUDGED_BYTES) return undefined;
  const lines = countLines(text);
  if (text.length / lines > MAX_AVERAGE_LINE) return "minified or generated (very long lines); not outlined";
  // A table of values costs as much to parse as code of its size and gives the map nothing.
  return isData(text, lines) ? "data (nearly every line a literal value); not outlined" : undefined;
}

/**
 * Whether nearly every written line is a literal value. A line at a time, stopping as soon as more
 * lines are code than data allows (for code, within about its first tenth): the same answer as
 * judging every line, at a fraction of the cost for the files that are code.
 */
function isData(text: string, lines: number): boolean {
  let written = 0;
  let code = 0;
  for (let start = 0; start < text.length;) {
    const end = text.indexOf("\n", start);
    const line = text.slice(start, end < 0 ? text.length : end);
    start = end < 0 ? text.length : end + 1;
    if (line.trim() === "") continue;
    written++;
    // Whole numbers, not shares: the early answer must be the answer, also at exactly nine in ten.
    if (!DATA_LINE.test(line.replace(LITERAL, "0")) && ++code * 10 > lines * (10 - DATA_LINES_IN_TEN)) return false;
  }
  return written > 0 && (written - code) * 10 >= written * DATA_LINES_IN_TEN;
}
