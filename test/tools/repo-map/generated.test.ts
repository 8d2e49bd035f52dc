import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildRepoMap } from "../../../src/tools/repo-map/build-map.js";
import { clearTagCache } from "../../../src/tools/repo-map/collect-tags.js";
import { generatedReason } from "../../../src/tools/repo-map/generated.js";
import { commitRepo } from "./helpers.js";

let base: string;
let repo: string;
// What a bundler writes: one long line of short names.
const minified = `${Array.from({ length: 1000 }, (_, i) => `function a${i}(b){return b+${i}}`).join(";")}\n`;

beforeAll(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), "bp-map-generated-"));
  repo = await commitRepo(path.join(base, "repo"), {
    "src/app.ts": "import { helper } from './helper';\nexport function startApp() {\n  return helper();\n}\n",
    "src/helper.ts": "export function helper() {\n  return 1;\n}\n",
    "dist/bundle.js": minified,
    "vendor/lib.min.js": "function tiny(){}\n",
  });
});

afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

describe("repo_map on minified and generated files", () => {
  it("tells minified code from source by name and line length", () => {
    expect(generatedReason("dist/bundle.js", minified)).toMatch(/very long lines/);
    expect(generatedReason("vendor/lib.min.js", "function tiny(){}\n")).toMatch(/minified/);
    expect(generatedReason("src/helper.ts", "export function helper() {\n  return 1;\n}\n".repeat(200))).toBeUndefined();
    // A short file with one long line is cheap to outline: it is kept.
    expect(generatedReason("src/names.ts", `export { ${"a, ".repeat(3000)}b };\n`)).toBeUndefined();
    // Nor a big hub of long re-export lines (a few hundred characters each), as API clients have.
    expect(generatedReason("src/index.d.ts", `export { ${"SomeLongTypeName, ".repeat(40)}Last } from "./types";\n`.repeat(40))).toBeUndefined();
  });

  it("lists them by name with why, says how many in the header, and does not read them again", async () => {
    clearTagCache();
    const cold = await buildRepoMap(repo, { tokens: 8192 });
    expect(cold.text).toMatch(/^2 files look minified or generated/m);
    expect(cold.text).toMatch(/^dist\/bundle\.js \(minified or generated \(very long lines\); not outlined\)$/m);
    expect(cold.text).toMatch(/^vendor\/lib\.min\.js \(minified; not outlined\)$/m);
    expect(cold.text).not.toMatch(/a17\(b\)/);
    expect(cold.text).toMatch(/│export function helper\(\) \{/);
    const warm = await buildRepoMap(repo, { tokens: 8192 });
    expect(warm.parsed).toBe(0);
    expect(warm.text).toBe(cold.text);
  });
});
