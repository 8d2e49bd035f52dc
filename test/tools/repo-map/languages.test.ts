import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildRepoMap } from "../../../src/tools/repo-map/build-map.js";
import { SAMPLES } from "../../fixtures/repo-map/samples.js";
import { commitRepo, definitionsOf, filesInOrder, headerOf } from "./helpers.js";

let base: string;
let samples: string;

beforeAll(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), "bp-map-lang-"));
  samples = await commitRepo(path.join(base, "samples"), {
    ...Object.fromEntries(SAMPLES.map((sample) => [sample.path, `${sample.lines.join("\n")}\n`])),
    "app/src/Util.kt":
      "package app\n\ndata class Point(val x: Int)\n\nfun distance(a: Point, b: Point): Double = 0.0\n",
    // Windows line ends, and characters outside the BMP (two UTF-16 code units each) before and on the definitions'
    // lines.
    // (300 é: counted as UTF-8 bytes rather than UTF-16 units, the indices would land lines further on.)
    "web/greet.ts": [
      `// 👋 greetings, ünïcödé ${"é".repeat(300)}`,
      'const wave = "👋👋";',
      "export function greet(name: string): string { return `${wave} ${name}`; }",
      "",
      "export class Greeter { /* 🎉 */",
      '  hello(): string { return greet("𝔴𝔬𝔯𝔩𝔡"); }',
      "}",
      "",
    ].join("\r\n"),
  });
});

afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

describe("repo_map parsers", () => {
  it.each(SAMPLES.map((sample) => [sample.language, sample] as const))(
    "finds %s definitions on their lines, each shown with its source line",
    async (_name, sample) => {
      const map = await buildRepoMap(samples, { tokens: 8192 });
      const shown = definitionsOf(map.text, sample.path);
      expect(shown.map(([line]) => line)).toEqual(sample.definitionLines);
      for (const [line, text] of shown) expect(text).toBe((sample.lines[line - 1] ?? "").replaceAll("\t", "  "));
      expect(headerOf(map.text, sample.path)).toBe(sample.path);
    },
  );

  it("shows the right line for definitions after Windows line ends and characters outside the BMP", async () => {
    const map = await buildRepoMap(samples, { tokens: 8192 });
    expect(definitionsOf(map.text, "web/greet.ts")).toEqual([
      [2, 'const wave = "👋👋";'],
      [3, "export function greet(name: string): string { return `${wave} ${name}`; }"],
      [5, "export class Greeter { /* 🎉 */"],
      [6, '  hello(): string { return greet("𝔴𝔬𝔯𝔩𝔡"); }'],
    ]);
  });

  it("outlines other languages by regular expressions and marks them so", async () => {
    const map = await buildRepoMap(samples, { tokens: 8192 });
    expect(headerOf(map.text, "app/src/Util.kt")).toBe("app/src/Util.kt (regex outline)");
    expect(definitionsOf(map.text, "app/src/Util.kt")).toEqual([
      [3, "data class Point(val x: Int)"],
      [5, "fun distance(a: Point, b: Point): Double = 0.0"],
    ]);
    expect(map.text).toContain("Files marked (regex outline) are in languages without a parser here");
    expect(map.parsersUnavailable).toBe(false);
  });

  it("marks the lines left out between and after the definitions shown", async () => {
    const map = await buildRepoMap(samples, { tokens: 8192 });
    const lines = map.text.split("\n");
    const start = lines.indexOf("server/main.go");
    expect(lines.slice(start, start + 6)).toEqual([
      "server/main.go",
      "   ⋮",
      "   5│type Server struct {",
      "   ⋮",
      "   9│type Handler interface {",
      "  10│  Serve()",
    ]);
    const end = lines.indexOf('  22│const Version = "1"');
    expect(lines[end + 1]).not.toBe("   ⋮");
  });
});

describe.each(SAMPLES.map((sample) => [sample.language, sample] as const))(
  "repo_map ranking in %s",
  (_name, sample) => {
    let repo: string;
    const [alpha, beta] = sample.names;
    const one = `lib/one/util.${sample.extension}`;
    const two = `lib/two/util.${sample.extension}`;

    beforeAll(async () => {
      // Two files named alike in different folders; only the second one's function is used.
      repo = await commitRepo(path.join(base, sample.extension), {
        [one]: sample.define(alpha),
        [two]: sample.define(beta),
        [`app/main.${sample.extension}`]: sample.use(beta),
      });
    });

    it("resolves a reference to the folder that defines it, not the same-named file", async () => {
      const map = await buildRepoMap(repo, { tokens: 1024 });
      expect(filesInOrder(map.text)[0]).toBe(two);
      expect(filesInOrder(map.text).indexOf(two)).toBeLessThan(filesInOrder(map.text).indexOf(one));
    });

    it("puts the file defining a focused symbol first", async () => {
      const map = await buildRepoMap(repo, { tokens: 1024, focus: alpha });
      expect(filesInOrder(map.text)[0]).toBe(one);
      expect(map.text).toContain(`(focus: ${alpha})`);
    });
  },
);
