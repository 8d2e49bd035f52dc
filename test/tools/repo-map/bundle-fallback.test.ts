import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { actionBundleOptions } from "../../../scripts/build-action.mjs";
import { commitRepo, headerOf } from "./helpers.js";

let base: string;

beforeAll(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), "bp-map-bundle-"));
});

afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

describe("repo_map inside a single-file bundle like the Action's", () => {
  it("has no parser worker or grammars there, so it outlines by regular expressions and says so", async () => {
    const buildMap = fileURLToPath(new URL("../../../src/tools/repo-map/build-map.ts", import.meta.url));
    const entry = path.join(base, "entry.ts");
    await fs.writeFile(entry, `import { buildRepoMap } from ${JSON.stringify(buildMap)};\nconsole.log((await buildRepoMap(process.argv[2] ?? ".", { tokens: 1024 })).text);\n`);
    const outfile = path.join(base, "bundle", "index.js");
    await build({ ...actionBundleOptions, entryPoints: [entry], outfile, logLevel: "silent" });
    const repo = await commitRepo(path.join(base, "repo"), { "src/util.ts": "export function sleep(ms: number) {\n  return ms;\n}\n" });

    const map = execFileSync(process.execPath, [outfile, repo], { encoding: "utf8" });
    expect(map).toContain("Parsers are not available here: every file is outlined by regular expressions (regex outline)");
    expect(headerOf(map, "src/util.ts")).toBe("src/util.ts (regex outline)");
    expect(map).toContain("   1│export function sleep(ms: number) {");
  }, 60_000);
});
