// Measures the size of every function and file under src/ with TypeScript's own parser, so that "no
// function over 80 lines, no file over 400" (docs/development.md) is a number rather than an impression.
// Usage: node scripts/long-functions.mjs [dir=src] — prints offenders, longest first.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

// Set at 80 and 300 when lines ran to 160 columns and more; Prettier's 120 columns lay the same code out
// over about a third more lines, so the limits grew by that third.
export const FUNCTION_LIMIT = 80;
export const FILE_LIMIT = 400;

const functionKinds = new Set([
  ts.SyntaxKind.FunctionDeclaration,
  ts.SyntaxKind.FunctionExpression,
  ts.SyntaxKind.ArrowFunction,
  ts.SyntaxKind.MethodDeclaration,
  ts.SyntaxKind.Constructor,
  ts.SyntaxKind.GetAccessor,
  ts.SyntaxKind.SetAccessor,
]);

/** A readable name for a function-like node: its own name, or the variable/property it is assigned to. */
function nameOf(node) {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  if (node.name) return node.name.getText();
  if (node.kind === ts.SyntaxKind.Constructor) return "constructor";
  const parent = node.parent;
  if (
    parent &&
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
  ) {
    return parent.name.getText();
  }
  return "(anonymous)";
}

/** Every function in one TypeScript source text, with its first and last line (1-based, inclusive). */
export function measureSource(fileName, text) {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const functions = [];
  const visit = (node) => {
    if (functionKinds.has(node.kind)) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
      functions.push({ name: nameOf(node), start, end, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { lines: text.split("\n").length - (text.endsWith("\n") ? 1 : 0), functions };
}

/** Every TypeScript source under `dir` (declaration files left out), as full paths. */
export function sourceFiles(dir) {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(m?ts|tsx)$/.test(entry) && !entry.endsWith(".d.ts") ? [path] : [];
  });
}

/** Every file under `dir` (paths relative to `root`, with forward slashes) and its functions. */
export function measureTree(root, dir = "src") {
  return sourceFiles(join(root, dir)).map((path) => ({
    file: relative(root, path).split("\\").join("/"),
    ...measureSource(path, readFileSync(path, "utf8")),
  }));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const files = measureTree(root, process.argv[2] ?? "src");
  const longFunctions = files
    .flatMap(({ file, functions }) => functions.map((f) => ({ file, ...f })))
    .filter((f) => f.lines > FUNCTION_LIMIT)
    .sort((a, b) => b.lines - a.lines);
  const longFiles = files.filter((f) => f.lines > FILE_LIMIT).sort((a, b) => b.lines - a.lines);
  for (const f of longFunctions) console.log(`${f.lines}\t${f.file}:${f.start}-${f.end}\t${f.name}`);
  for (const f of longFiles) console.log(`${f.lines}\t${f.file}\t(file)`);
  if (longFunctions.length === 0 && longFiles.length === 0)
    console.log(`no function over ${FUNCTION_LIMIT} lines, no file over ${FILE_LIMIT}`);
}
