import { readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { fileImports } from "../../scripts/import-directions.mjs";

// docs/ARCHITECTURE.md: the use cases live in folders of src/workflow/ (plan, build, approval, surfaces, …), each with
// an index.ts that is its public face. Code outside a folder imports its index, never a file inside it.
const root = fileURLToPath(new URL("../..", import.meta.url));
const workflow = path.join(root, "src", "workflow");
const folders = readdirSync(workflow, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => `src/workflow/${entry.name}/`);

/**
 * Imports that reach inside a folder on purpose. app/engine-tables.ts loads the template's diff budget at start, for
 * its tokenizer tables (a side effect, not an API).
 */
const PRELOADS = new Set(["src/app/engine-tables.ts -> src/workflow/build/diff-for-model.ts"]);

describe("feature folders of src/workflow", () => {
  it("are the use cases and GitHub's surfaces, each with an index", () => {
    expect(folders).toEqual(expect.arrayContaining(["src/workflow/approval/", "src/workflow/build/"]));
    expect(folders).toEqual(expect.arrayContaining(["src/workflow/plan/", "src/workflow/surfaces/"]));
    const indexes = new Set(fileImports(root).map(({ file }) => file));
    expect(folders.filter((folder) => !indexes.has(`${folder}index.ts`))).toEqual([]);
  });

  it("are imported from outside through their index only", () => {
    const reachingIn = fileImports(root).filter(({ file, target }) => {
      const folder = folders.find((candidate) => target.startsWith(candidate));
      return folder && !file.startsWith(folder) && target !== `${folder}index.ts`;
    });
    const described = reachingIn.map(({ file, target }) => `${file} -> ${target}`);
    expect(described.filter((line) => !PRELOADS.has(line))).toEqual([]);
    expect(described.filter((line) => PRELOADS.has(line))).toEqual([...PRELOADS]);
  });
});
