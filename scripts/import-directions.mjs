// Reads every import of src/ with TypeScript's own parser, so that "who may import whom" (issue #29,
// docs/ARCHITECTURE.md) is checked against the code rather than remembered.
// Usage: node scripts/import-directions.mjs — prints each folder -> folder direction and its count.
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { sourceFiles } from "./long-functions.mjs";

/**
 * The part of the house a file of src/ belongs to: its first folder ("agent", "jobs", ...), or
 * "entries" for the process entry files that stand in src/ itself.
 */
export function partOf(file) {
  const match = /^src\/([^/]+)\/.+$/.exec(file);
  if (match?.[1]) return match[1];
  return /^src\/[^/]+\.ts$/.test(file) ? "entries" : undefined;
}

/**
 * Packages that count as a part of their own: GitHub's (only src/github and the process code may hold them) and
 * Redis's (Bottleneck among them: here it is only ever plugin-throttling's pacing shared through Redis).
 */
export function packagePart(specifier) {
  if (specifier === "probot" || specifier.startsWith("probot/") || specifier.startsWith("@octokit/"))
    return "pkg:github";
  if (["ioredis", "bullmq", "bottleneck"].includes(specifier)) return "pkg:redis";
  return undefined;
}

/** Every module specifier one source text names: import and export-from declarations (type-only too) and import(). */
export function specifiersOf(fileName, text) {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found = [];
  const visit = (node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push(node.moduleSpecifier.text);
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      found.push(node.argument.literal.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The source file a relative specifier names (NodeNext: "./x.js" is ./x.ts), relative to `root`. */
function resolveRelative(root, fromFile, specifier) {
  const base = resolve(root, dirname(fromFile), specifier);
  const candidates = [base.replace(/\.(m?)js$/, ".$1ts"), base, `${base}.ts`, join(base, "index.ts")];
  const hit = candidates.find((path) => existsSync(path) && statSync(path).isFile());
  return relative(root, hit ?? candidates[0])
    .split("\\")
    .join("/");
}

/**
 * Every import of src/ with what it names: { file, specifier, target } (a relative specifier resolved to its file;
 * paths relative to `root`).
 */
export function fileImports(root, dir = "src") {
  return sourceFiles(join(root, dir)).flatMap((path) => {
    const file = relative(root, path).split("\\").join("/");
    return specifiersOf(path, readFileSync(path, "utf8")).map((specifier) => ({
      file,
      specifier,
      target: specifier.startsWith(".") ? resolveRelative(root, file, specifier) : specifier,
    }));
  });
}

/**
 * Every import of src/ that crosses from one part to another: { from, to, file, target } (paths relative to `root`).
 */
export function crossImports(root, dir = "src") {
  return fileImports(root, dir).flatMap(({ file, specifier, target }) => {
    const from = partOf(file);
    const to = specifier.startsWith(".") ? partOf(target) : packagePart(specifier);
    return from && to && from !== to ? [{ from, to, file, target }] : [];
  });
}

/**
 * Files of `dir` that import one another round in a circle, type-only imports included: each cycle
 * as its files, sorted. A newcomer reading a file should find what it uses below it, never above.
 */
export function importCycles(root, dir = "src") {
  const edges = new Map();
  for (const { file, specifier, target } of fileImports(root, dir)) {
    if (!specifier.startsWith(".")) continue;
    edges.set(file, [...(edges.get(file) ?? []), target]);
  }
  // Tarjan's strongly connected components.
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const cycles = [];
  const visit = (file) => {
    index.set(file, index.size);
    low.set(file, index.get(file));
    stack.push(file);
    onStack.add(file);
    for (const next of edges.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file), low.get(next)));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file), index.get(next)));
    }
    if (low.get(file) !== index.get(file)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || (edges.get(file) ?? []).includes(file)) cycles.push(component.sort());
  };
  for (const file of edges.keys()) if (!index.has(file)) visit(file);
  return cycles;
}

/** How many imports run in each direction, keyed "from -> to". */
export function countDirections(imports) {
  const counts = {};
  for (const { from, to } of imports) counts[`${from} -> ${to}`] = (counts[`${from} -> ${to}`] ?? 0) + 1;
  return counts;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const counts = countDirections(crossImports(root));
  for (const key of Object.keys(counts).sort()) console.log(`${counts[key]}\t${key}`);
}
