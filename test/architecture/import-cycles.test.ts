import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { importCycles } from "../../scripts/import-directions.mjs";

// docs/ARCHITECTURE.md: a file's imports lead down, never back round to it (type-only imports too):
// a type the parts of a split module share lives in a file of its own, not in the facade that imports them.
const root = fileURLToPath(new URL("../..", import.meta.url));

describe("import cycles", () => {
  const scratch: string[] = [];
  afterEach(() => scratch.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it("src/ has none", () => {
    expect(importCycles(root)).toEqual([]);
  });

  it("finds one through a type-only import, and leaves a tree of imports alone", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "bp-cycles-"));
    scratch.push(dir);
    mkdirSync(path.join(dir, "src", "parts"), { recursive: true });
    writeFileSync(
      path.join(dir, "src", "facade.ts"),
      'import { part } from "./parts/part.js";\nexport interface Options { a: number }\nexport const run = part;\n',
    );
    writeFileSync(
      path.join(dir, "src", "parts", "part.ts"),
      'import type { Options } from "../facade.js";\nimport { leaf } from "./leaf.js";\nexport const part = (options: Options) => leaf(options.a);\n',
    );
    writeFileSync(path.join(dir, "src", "parts", "leaf.ts"), "export const leaf = (n: number) => n + 1;\n");
    expect(importCycles(dir)).toEqual([["src/facade.ts", "src/parts/part.ts"]]);

    writeFileSync(
      path.join(dir, "src", "parts", "part.ts"),
      'import { leaf } from "./leaf.js";\nexport const part = (options: { a: number }) => leaf(options.a);\n',
    );
    expect(importCycles(dir)).toEqual([]);
  });
});
