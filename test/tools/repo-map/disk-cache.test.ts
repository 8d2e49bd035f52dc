import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildRepoMap } from "../../../src/tools/repo-map/build-map.js";
import { clearTagCache } from "../../../src/tools/repo-map/collect-tags.js";
import { cacheFile } from "../../../src/tools/repo-map/disk-cache.js";
import { commitRepo, git, write } from "./helpers.js";

let base: string;
let repo: string;
let cacheDir: string;

beforeAll(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), "bp-map-disk-"));
  const files: Record<string, string> = {
    "src/shared.ts": "export function shared(n: number): number {\n  return n;\n}\n",
  };
  for (let i = 0; i < 40; i++)
    files[`src/part${i}.ts`] =
      `import { shared } from "./shared";\nexport function part${i}() {\n  return shared(${i});\n}\n`;
  files["lib/tool.py"] = "def run_tool():\n    return 1\n";
  repo = await commitRepo(path.join(base, "repo"), files);
  cacheDir = path.join(base, "mirrors", "repo.repo-map");
});

afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

describe("repo_map's tags on disk", () => {
  it("lets a fresh cache (a new process) map a pushed tree warm, parsing only the new blobs", async () => {
    clearTagCache();
    const cold = await buildRepoMap(repo, { tagCacheDir: cacheDir });
    expect(cold.parsed).toBe(42);
    expect((await fs.readdir(cacheDir)).filter((name) => name.endsWith(".tmp"))).toEqual([]);

    clearTagCache();
    const fresh = await buildRepoMap(repo, { tagCacheDir: cacheDir });
    expect(fresh.parsed).toBe(0);
    expect(fresh.text).toBe(cold.text);

    // A push changes one file: the next process parses that one alone.
    await write(repo, "src/part3.ts", "export function part3Renamed() {\n  return 3;\n}\n");
    git(repo, "commit", "-q", "-am", "rename");
    clearTagCache();
    const pushed = await buildRepoMap(repo, { tagCacheDir: cacheDir, tokens: 8192 });
    expect(pushed.parsed).toBe(1);
    expect(pushed.text).toMatch(/│export function part3Renamed\(\) \{/);
  });

  it("maps cold, and whole, when the cache file is torn", async () => {
    await fs.writeFile(cacheFile(cacheDir), '[["abc:typescript", {"tags": {"definitions": 3');
    clearTagCache();
    const map = await buildRepoMap(repo, { tagCacheDir: cacheDir });
    expect(map.parsed).toBe(42);
    clearTagCache();
    expect((await buildRepoMap(repo, { tagCacheDir: cacheDir })).parsed).toBe(0);
  });

  it("says so, and still maps, when the cache cannot be written", async () => {
    const blocked = path.join(base, "not-a-dir");
    await fs.writeFile(blocked, "a file where the cache directory would be");
    clearTagCache();
    const map = await buildRepoMap(repo, { tagCacheDir: path.join(blocked, "cache") });
    expect(map.text).toMatch(
      /^The parsed tags could not be saved for the next process \(.+\); this map is complete\.$/m,
    );
    expect(map.text).toMatch(/^src\/shared\.ts$/m);
  });
});
