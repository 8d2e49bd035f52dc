import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildRepoMap } from "../../../src/tools/repo-map/build-map.js";
import { clearTagCache } from "../../../src/tools/repo-map/collect-tags.js";
import { forgetUseGraph } from "../../../src/tools/repo-map/use-graph.js";
import { commitRepo, definitionsOf, filesInOrder, git, sharedAndParts, write } from "./helpers.js";

let base: string;
let repo: string;

beforeAll(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), "bp-map-cache-"));
  const files = sharedAndParts(40);
  files["scripts/tool.py"] = "def run_tool():\n    return 1\n";
  // Special-token text in source is counted as the text it is, not refused by the tokenizer.
  files["src/tokens.ts"] = 'export const END_OF_TEXT = "<|endoftext|>";\n';
  repo = await commitRepo(path.join(base, "repo"), files);
});

afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

describe("repo_map's tag cache", () => {
  it("re-parses only the files whose content changed, keyed by blob", async () => {
    clearTagCache();
    const cold = await buildRepoMap(repo);
    expect(cold.parsed).toBe(43);
    const warm = await buildRepoMap(repo);
    expect(warm.parsed).toBe(0);
    expect(warm.text).toBe(cold.text);

    await write(repo, "src/part7.ts", "export function part7Renamed() {\n  return 7;\n}\n");
    const edited = await buildRepoMap(repo, { tokens: 8192 });
    expect(edited.parsed).toBe(1);
    expect(definitionsOf(edited.text, "src/tokens.ts")).toEqual([[1, 'export const END_OF_TEXT = "<|endoftext|>";']]);
    expect(definitionsOf(edited.text, "src/part7.ts")).toEqual([[1, "export function part7Renamed() {"]]);
    expect((await buildRepoMap(repo, { tokens: 8192 })).parsed).toBe(0);

    // Committed, the file's blob is the content already seen: nothing to parse.
    git(repo, "commit", "-q", "-am", "rename");
    expect((await buildRepoMap(repo, { tokens: 8192 })).parsed).toBe(0);
  });

  it("answers each focus and each thread on one unchanged tree, though the graph is built once", async () => {
    for (const focus of ["part3", "part5", "part3"]) {
      const map = await buildRepoMap(repo, { focus, tokens: 512 });
      expect(filesInOrder(map.text)[0]).toBe(`src/${focus}.ts`);
    }
    const thread = await buildRepoMap(repo, {
      tokens: 512,
      mentions: { identifiers: new Set(["run_tool"]), paths: new Set() },
    });
    expect(filesInOrder(thread.text)[0]).toBe("scripts/tool.py");
    expect(filesInOrder((await buildRepoMap(repo, { tokens: 512 })).text)[0]).toBe("src/shared.ts");
  });

  it("parses a blob found twice in the tree once", async () => {
    const copies = await commitRepo(path.join(base, "copies"), {
      "a/util.js": "function sameHelper() {\n  return 1;\n}\n",
      "b/util.js": "function sameHelper() {\n  return 1;\n}\n",
      "c/main.js": "sameHelper();\n",
    });
    clearTagCache();
    const map = await buildRepoMap(copies);
    expect(map.parsed).toBe(2);
    expect(definitionsOf(map.text, "a/util.js")).toEqual([[1, "function sameHelper() {"]]);
    expect(definitionsOf(map.text, "b/util.js")).toEqual([[1, "function sameHelper() {"]]);
  });

  it("gives the same bytes on two cold runs", async () => {
    clearTagCache();
    const first = await buildRepoMap(repo, { focus: "shared", tokens: 512 });
    clearTagCache();
    const second = await buildRepoMap(repo, { focus: "shared", tokens: 512 });
    expect(second.parsed).toBe(first.parsed);
    expect(second.text).toBe(first.text);
    expect(first.tokens).toBeLessThanOrEqual(512);
  });

  it("after each one-file change, a warm map equals a cold map of the same tree", async () => {
    const cold = async (options: Parameters<typeof buildRepoMap>[1]) => {
      clearTagCache();
      forgetUseGraph();
      return (await buildRepoMap(repo, options)).text;
    };
    await cold({ tokens: 1024 });
    const changes: Array<[string, string]> = [
      // A new definition others could use, and a new use of an existing one.
      [
        "src/part3.ts",
        'import { shared, part4 } from "./shared";\nexport function part3() {\n  return shared(part4());\n}\nexport function freshHelper() {\n  return 3;\n}\n',
      ],
      // The same file again: git lists the tree the same way, only the content differs.
      [
        "src/part3.ts",
        'import { freshHelper } from "./part9";\nexport function part3Again() {\n  return freshHelper();\n}\n',
      ],
      // The file everything uses: every edge into it changes.
      [
        "src/shared.ts",
        "export function shared(n: number): number {\n  return n + 1;\n}\nexport function part4(): number {\n  return 4;\n}\n",
      ],
      // A file that stops defining what others use.
      ["src/part9.ts", "export const nothingHere = 0;\n"],
    ];
    for (const [file, content] of changes) {
      await write(repo, file, content);
      for (const options of [
        { tokens: 1024 },
        { tokens: 512, focus: "freshHelper" },
        { tokens: 512, mentions: { identifiers: new Set(["part4"]), paths: new Set(["src/part9.ts"]) } },
      ]) {
        const warm = await buildRepoMap(repo, options);
        expect(warm.parsed).toBeLessThanOrEqual(1);
        expect(warm.text, `${file}: ${JSON.stringify(options)}`).toBe(await cold(options));
      }
    }
    git(repo, "checkout", "--", ".");
  });

  it("shows a file deleted in the working tree by name, with why", async () => {
    await fs.rm(path.join(repo, "scripts/tool.py"));
    const map = await buildRepoMap(repo, { tokens: 8192 });
    expect(map.text).toMatch(/^scripts\/tool\.py \(deleted in the working tree\)$/m);
    git(repo, "checkout", "--", "scripts/tool.py");
  });
});
