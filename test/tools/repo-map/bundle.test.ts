import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { actionBundleOptions, GRAMMAR_FILES, writeRepoMapAssets } from "../../../scripts/build-action.mjs";
import { PARSED_LANGUAGES } from "../../../src/tools/repo-map/queries.js";
import { commitRepo, headerOf } from "./helpers.js";

let base: string;

beforeAll(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), "bp-map-bundle-"));
});

afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

/** A bundle like the Action's (actionBundleOptions) of a script printing the map of the repository it is given. */
async function bundleMapScript(dir: string): Promise<string> {
  const buildMap = fileURLToPath(new URL("../../../src/tools/repo-map/build-map.ts", import.meta.url));
  const pool = fileURLToPath(new URL("../../../src/tools/repo-map/tag-pool.ts", import.meta.url));
  const entry = path.join(base, "entry.ts");
  await fs.writeFile(
    entry,
    `import { buildRepoMap } from ${JSON.stringify(buildMap)};\nimport { stopParserWorkers } from ${JSON.stringify(pool)};\nconsole.log((await buildRepoMap(process.argv[2] ?? ".", { tokens: 1024 })).text);\nstopParserWorkers();\n`,
  );
  const outfile = path.join(dir, "index.js");
  await build({ ...actionBundleOptions, entryPoints: [entry], outfile, logLevel: "silent" });
  return outfile;
}

describe("repo_map inside a single-file bundle like the Action's", () => {
  it("without the parser worker and grammars beside it, outlines by regular expressions and says so", async () => {
    const outfile = await bundleMapScript(path.join(base, "bare"));
    const repo = await commitRepo(path.join(base, "repo"), {
      "src/util.ts": "export function sleep(ms: number) {\n  return ms;\n}\n",
    });

    const map = execFileSync(process.execPath, [outfile, repo], { encoding: "utf8" });
    expect(map).toContain(
      "Parsers are not available here: every file is outlined by regular expressions (regex outline)",
    );
    expect(headerOf(map, "src/util.ts")).toBe("src/util.ts (regex outline)");
    expect(map).toContain("   1│export function sleep(ms: number) {");
  });

  it("with the parser worker and the gzipped grammars the build writes beside it, parses every listed language", async () => {
    expect([...GRAMMAR_FILES].sort()).toEqual(
      Object.values(PARSED_LANGUAGES)
        .map((language) => language.grammar)
        .sort(),
    );
    const dir = path.join(base, "full");
    const outfile = await bundleMapScript(dir);
    await writeRepoMapAssets(dir);
    const repo = await commitRepo(path.join(base, "polyglot"), {
      "src/util.ts": "export function sleep(ms: number) {\n  return ms;\n}\n",
      "tools/report.py": "def write_report(rows):\n    return rows\n",
      "cmd/main.go": "package main\n\nfunc RunServer() {}\n",
      "lib/Cache.cs": "class Cache {\n  void Evict() {}\n}\n",
    });

    const map = execFileSync(process.execPath, [outfile, repo], { encoding: "utf8" });
    expect(map).not.toContain("regex outline");
    expect(headerOf(map, "src/util.ts")).toBe("src/util.ts");
    expect(map).toContain("   1│export function sleep(ms: number) {");
    expect(map).toContain("   1│def write_report(rows):");
    expect(map).toContain("   3│func RunServer() {}");
    expect(map).toContain("   2│  void Evict() {}");
  });
});
