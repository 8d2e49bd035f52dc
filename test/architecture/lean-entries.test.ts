import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The processes that never build a repository map or fill a pull request template (the intake and the
// workers, which only import the use cases to triage and hand on) do not load the tokenizer's tables
// (68 MB and 0.24 s each): it is imported where it is used, with import().
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
        (ts.isImportDeclaration(statement) && !statement.importClause?.isTypeOnly) || (ts.isExportDeclaration(statement) && !statement.isTypeOnly && statement.moduleSpecifier);
      if (!loads) continue;
      const specifier = ((statement as ts.ImportDeclaration | ts.ExportDeclaration).moduleSpecifier as ts.StringLiteral).text;
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

describe("what the intake and the workers load at start", () => {
  it.each(["src/index.ts", "src/local-worker.ts", "src/worker.ts"])("%s does not load gpt-tokenizer", (entry) => {
    const loaded = packagesLoadedBy(entry);
    expect(loaded.has("probot") || loaded.has("zod")).toBe(true);
    expect(loaded.has("gpt-tokenizer")).toBe(false);
  });
});
