import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The intake never builds a repository map or fills a pull request template, and does not load the
// tokenizer's tables (68 MB and 0.24 s): their users import them with import(), and the processes that
// triage or run lane work load them at start (src/app/engine-tables.ts).
const root = fileURLToPath(new URL("../..", import.meta.url));

/** The packages a file loads when it loads: static, value imports only, followed through src/. */
function packagesLoadedBy(entry: string): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest);
    for (const statement of source.statements) {
      const loads =
        (ts.isImportDeclaration(statement) && !statement.importClause?.isTypeOnly) ||
        (ts.isExportDeclaration(statement) && !statement.isTypeOnly && statement.moduleSpecifier);
      if (!loads) continue;
      const specifier = ((statement as ts.ImportDeclaration | ts.ExportDeclaration).moduleSpecifier as ts.StringLiteral)
        .text;
      if (!specifier.startsWith(".")) packages.add(specifier);
      else {
        const target = path.resolve(path.dirname(file), specifier.replace(/\.js$/, ".ts"));
        if (existsSync(target)) visit(target);
      }
    }
  };
  visit(path.join(root, entry));
  return packages;
}

describe("what the processes load at start", () => {
  it("the intake does not load gpt-tokenizer", () => {
    const loaded = packagesLoadedBy("src/index.ts");
    expect(loaded.has("zod")).toBe(true);
    expect(loaded.has("gpt-tokenizer")).toBe(false);
  });

  it.each(["src/local-worker.ts", "src/worker.ts", "src/job-runner.ts"])("%s does, before its first job", (entry) => {
    expect(packagesLoadedBy(entry).has("gpt-tokenizer")).toBe(true);
  });
});
