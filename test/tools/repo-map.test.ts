import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { countTokens } from "gpt-tokenizer";
import { dispatchToolCall, toolsForMode } from "../../src/tools/registry.js";
import { createCommandRunner } from "../../src/workspace/command-runner.js";
import type { ToolContext } from "../../src/tools/tool.js";
import { definitionsOf, filesInOrder, git, headerOf, write } from "./repo-map/helpers.js";

let base: string;
let root: string;

function context(dir: string, overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    root: dir,
    mode: "plan",
    runner: createCommandRunner(),
    filesRead: new Set(),
    audit: [],
    allowWorkflowWrites: false,
    ...overrides,
  };
}

const repoMap = (args: unknown, dir = root, mode: "plan" | "build" = "plan", overrides: Partial<ToolContext> = {}) =>
  dispatchToolCall("repo_map", JSON.stringify(args), context(dir, { mode, ...overrides }));

const FILES: Record<string, string> = {
  "README.md": "# Demo\n",
  "src/lib/retry.ts": [
    "import { sleep } from './sleep.js';", // 1
    "", // 2
    "export interface RetryOptions {", // 3
    "  attempts: number;", // 4
    "}", // 5
    "", // 6
    "export type Backoff = (attempt: number) => number;", // 7
    "", // 8
    "export async function retry<T>(fn: () => Promise<T>, options: RetryOptions): Promise<T> {", // 9
    "  return fn();", // 10
    "}", // 11
    "", // 12
    "export class RetryPolicy {", // 13
    "  private readonly count = 3;", // 14
    "  constructor(private readonly options: RetryOptions) {}", // 15
    "  async run(fn: () => void): Promise<void> {", // 16
    "    if (this.count > 0) fn();", // 17
    "  }", // 18
    "}", // 19
    "", // 20
    "export const DEFAULT_ATTEMPTS = 3;", // 21
    "const jitter = (ms: number) => ms * Math.random();", // 22
    "export enum Mode { Fast, Slow }", // 23
  ].join("\n"),
  "src/lib/sleep.ts": "export function sleep(ms: number) {\n  return new Promise((r) => setTimeout(r, ms));\n}\n",
  "src/a.ts": "import { sleep } from './lib/sleep.js';\n",
  "src/b.ts": "import { sleep } from './lib/sleep.js';\nimport { retry } from './lib/retry.js';\n",
  "src/c.js": "const { sleep } = require('./lib/sleep');\nmodule.exports.helper = () => sleep(1);\n",
  "tools/parse.py": [
    "import os", // 1
    "", // 2
    "MAX_DEPTH = 3", // 3
    "", // 4
    "class Parser(Base):", // 5
    '    """Parses things."""', // 6
    "    def parse(self, text):", // 7
    "        def inner():", // 8
    "            pass", // 9
    "        return text", // 10
    "", // 11
    "async def load_config(path):", // 12
    "    return None", // 13
  ].join("\n"),
  "server/main.go": [
    "package main", // 1
    "", // 2
    'import "fmt"', // 3
    "", // 4
    "type Server struct {", // 5
    "\tName string", // 6
    "}", // 7
    "", // 8
    "type Handler interface {", // 9
    "\tServe()", // 10
    "}", // 11
    "", // 12
    "func (s *Server) Start() error {", // 13
    "\treturn nil", // 14
    "}", // 15
    "", // 16
    "func NewServer(name string) *Server {", // 17
    '\tfmt.Println("x")', // 18
    "\treturn &Server{Name: name}", // 19
    "}", // 20
  ].join("\n"),
  "core/src/lib.rs": [
    "use std::fmt;", // 1
    "", // 2
    "pub struct Config {", // 3
    "    pub name: String,", // 4
    "}", // 5
    "", // 6
    "impl Config {", // 7
    "    pub fn new() -> Self {", // 8
    "        Config { name: String::new() }", // 9
    "    }", // 10
    "}", // 11
    "", // 12
    "pub(crate) fn helper() {}", // 13
    "pub trait Store {", // 14
    "    fn get(&self) -> u32;", // 15
    "}", // 16
    "pub enum Kind { A, B }", // 17
  ].join("\n"),
  "app/src/Main.java": [
    "package app;", // 1
    "", // 2
    "import java.util.List;", // 3
    "", // 4
    "public final class Main {", // 5
    "    private int count = 0;", // 6
    "", // 7
    "    public static void main(String[] args) {", // 8
    "        run(args);", // 9
    "    }", // 10
    "", // 11
    "    private List<String> names(int limit) {", // 12
    "        return null;", // 13
    "    }", // 14
    "}", // 15
  ].join("\n"),
  "app/src/Util.kt": [
    "package app",
    "",
    "data class Point(val x: Int)",
    "",
    "fun distance(a: Point, b: Point): Double = 0.0",
    "",
    "object Registry {",
    "    fun register(name: String) {}",
    "}",
  ].join("\n"),
  "lib/greeter.rb": [
    "require 'json'",
    "",
    "module Greeting",
    "  class Greeter",
    "    def hello(name)",
    "      name",
    "    end",
    "",
    "    def self.build",
    "    end",
    "  end",
    "end",
  ].join("\n"),
  "include/buffer.h": [
    "#ifndef BUFFER_H", // 1
    "#define BUFFER_H", // 2
    "", // 3
    "struct buffer {", // 4
    "  char *data;", // 5
    "};", // 6
    "", // 7
    "typedef unsigned long buffer_size_t;", // 8
    "", // 9
    "int buffer_append(struct buffer *b, const char *s);", // 10
    "static inline void buffer_clear(struct buffer *b) {", // 11
    "}", // 12
    "#endif", // 13
  ].join("\n"),
  "docs/notes.txt": "function notASymbol() {}\n",
  "src/many.ts": Array.from({ length: 50 }, (_, i) => `export function fn${i + 1}() {}`).join("\n"),
  ".gitignore": "ignored/\n",
};

beforeAll(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), "bp-map-"));
  root = path.join(base, "repo");
  await fs.mkdir(root);
  git(root, "init", "-q");
  for (const [file, content] of Object.entries(FILES)) await write(root, file, content);
  // Outside the workspace: a tracked symlink to it must never be read.
  await write(base, "outside/secret.ts", "export function outsideSecret() {}\n");
  await fs.symlink(path.join(base, "outside", "secret.ts"), path.join(root, "src", "leak.ts"));
  await write(root, "assets/logo.png", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]));
  const big = [
    "export function firstHuge() {}",
    ...Array.from({ length: 9000 }, (_, i) => `// padding line ${i} ${"x".repeat(20)}`),
    "export function pastTheLimit() {}",
  ];
  await write(root, "gen/huge.ts", big.join("\n"));
  git(root, "add", "-A");
  git(root, "commit", "-q", "-m", "init");
  await write(root, "src/untracked.ts", "export function draftOnly() {}\n");
  await write(root, "ignored/hidden.ts", "export function ignoredThing() {}\n");
});

afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

describe("repo_map", () => {
  it("lists TypeScript definitions with their line numbers and source lines, class members included", async () => {
    const map = (await repoMap({})).content;
    expect(definitionsOf(map, "src/lib/retry.ts")).toEqual([
      [3, "export interface RetryOptions {"],
      [7, "export type Backoff = (attempt: number) => number;"],
      [9, "export async function retry<T>(fn: () => Promise<T>, options: RetryOptions): Promise<T> {"],
      [13, "export class RetryPolicy {"],
      [15, "  constructor(private readonly options: RetryOptions) {}"],
      [16, "  async run(fn: () => void): Promise<void> {"],
      [21, "export const DEFAULT_ATTEMPTS = 3;"],
      [22, "const jitter = (ms: number) => ms * Math.random();"],
      [23, "export enum Mode { Fast, Slow }"],
    ]);
    expect(definitionsOf(map, "src/c.js")).toEqual([[2, "module.exports.helper = () => sleep(1);"]]);
  });

  it("lists files of unknown languages and binary files by name only", async () => {
    const map = (await repoMap({})).content;
    for (const file of ["docs/notes.txt", "README.md", "assets/logo.png"]) {
      expect(headerOf(map, file)).toBe(file);
      expect(definitionsOf(map, file)).toEqual([]);
    }
    expect(map).not.toContain("notASymbol");
  });

  it("outlines only the head of a huge file and says so", async () => {
    const map = (await repoMap({})).content;
    expect(headerOf(map, "gen/huge.ts")).toMatch(/^gen\/huge\.ts \(\d+ KB; outlined from the first 64 KB\)$/);
    expect(definitionsOf(map, "gen/huge.ts")).toEqual([[1, "export function firstHuge() {}"]]);
    expect(map).not.toContain("pastTheLimit");
  });

  it("lists tracked files only: not untracked or ignored ones, nothing from .git", async () => {
    const map = (await repoMap({})).content;
    expect(map).not.toContain("untracked.ts");
    expect(map).not.toContain("draftOnly");
    expect(map).not.toContain("ignored");
    expect(map).not.toMatch(/^\.git\//m);
    expect(map).not.toContain("HEAD");
    expect(map).toMatch(/^Repository map: 19 tracked files, /);
  });

  it("never reads through a symlink that leaves the workspace", async () => {
    const map = (await repoMap({ focus: "leak" })).content;
    expect(headerOf(map, "src/leak.ts")).toBe("src/leak.ts (symbolic link)");
    expect(map).not.toContain("outsideSecret");
  });

  it("treats null, absent and empty-string arguments alike", async () => {
    const absent = (await dispatchToolCall("repo_map", "", context(root))).content;
    expect(absent).not.toMatch(/^Error:/);
    expect((await repoMap({})).content).toBe(absent);
    expect((await repoMap({ focus: null })).content).toBe(absent);
    expect((await repoMap({ focus: "" })).content).toBe(absent);
    expect((await repoMap({ focus: [] })).content).toBe(absent);
  });

  it("ranks a file used by many above the files that use it when there is no focus", async () => {
    const map = (await repoMap({})).content;
    // sleep.ts is used by a.ts, b.ts, c.js and retry.ts; retry.ts only by b.ts.
    const order = filesInOrder(map);
    expect(order[0]).toBe("src/lib/sleep.ts");
    expect(order.indexOf("src/lib/sleep.ts")).toBeLessThan(order.indexOf("src/lib/retry.ts"));
    // src/a.ts only imports: it defines nothing, so the map does not spend a line on it.
    expect(order).not.toContain("src/a.ts");
  });

  it("ranks files whose path matches the focus first", async () => {
    const map = (await repoMap({ focus: ["server/"] })).content;
    expect(map).toContain("(focus: server)");
    expect(filesInOrder(map)[0]).toBe("server/main.go");
    const byName = (await repoMap({ focus: "Util.kt" })).content;
    expect(filesInOrder(byName)[0]).toBe("app/src/Util.kt");
  });

  it("ranks files that define a focused symbol first, case-insensitively", async () => {
    const map = (await repoMap({ focus: "LOAD_CONFIG" })).content;
    expect(filesInOrder(map)[0]).toBe("tools/parse.py");
    const go = (await repoMap({ focus: ["start"] })).content;
    expect(filesInOrder(go)[0]).toBe("server/main.go");
  });

  it("keeps a focused definition in view in a file with many", async () => {
    const map = (await repoMap({ focus: ["fn50"] })).content;
    expect(filesInOrder(map)[0]).toBe("src/many.ts");
    expect(definitionsOf(map, "src/many.ts")).toContainEqual([50, "export function fn50() {}"]);
  });

  it("tilts the ranking towards what the thread mentions", async () => {
    const plain = filesInOrder((await repoMap({})).content);
    expect(plain[0]).not.toBe("tools/parse.py");
    const thread = "The `load_config` call in tools/parse.py should retry; see MAX_DEPTH.";
    const tilted = filesInOrder((await repoMap({}, root, "plan", { repoMap: { thread } })).content);
    expect(tilted[0]).toBe("tools/parse.py");
  });

  it("fits the budget the call site sets", async () => {
    for (const tokens of [256, 1024]) {
      const map = (await repoMap({}, root, "plan", { repoMap: { tokens } })).content;
      expect(countTokens(map)).toBeLessThanOrEqual(tokens);
    }
  });

  it("says when nothing matches the focus, and still maps the repository", async () => {
    const map = (await repoMap({ focus: "zzz_nothing_like_this" })).content;
    expect(map).toContain("Nothing matched the focus (zzz_nothing_like_this); showing the whole repository.");
    expect(headerOf(map, "src/lib/retry.ts")).toBe("src/lib/retry.ts");
  });

  it("refuses a focus of the wrong type with an Error: naming focus", async () => {
    for (const focus of [42, { path: "src" }, [1, 2], true]) {
      const result = await repoMap({ focus });
      expect(result.content).toMatch(
        /^Error: invalid arguments for repo_map:\n- focus: must be a string or an array of strings/,
      );
    }
  });

  it("is offered in plan mode and build mode, right after search, and runs in both", async () => {
    for (const mode of ["plan", "build"] as const) {
      const names = toolsForMode(mode).map((tool) => tool.function.name);
      expect(names.indexOf("repo_map")).toBe(names.indexOf("search") + 1);
      const result = await repoMap({ focus: "retry" }, root, mode);
      expect(result.content).toMatch(/^Repository map: /);
    }
    const tool = toolsForMode("plan").find((candidate) => candidate.function.name === "repo_map");
    expect(Object.keys((tool?.function.parameters as { properties: Record<string, unknown> }).properties)).toEqual([
      "focus",
    ]);
  });
});

describe("repo_map on a large repository", () => {
  let large: string;
  beforeAll(async () => {
    large = path.join(base, "large");
    await fs.mkdir(large);
    git(large, "init", "-q");
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 1500; i++) {
      const dir = `pkg${String(i % 60).padStart(2, "0")}`;
      const uses =
        i > 0 ? `import { helper${i - 1} } from "./module${i - 1}";\nexport const used${i} = helper${i - 1}();\n` : "";
      const content = `${uses}export function handler${i}() {}\nexport function helper${i}() {}\nexport class Model${i} {}\n`;
      writes.push(write(large, `${dir}/module${i}.ts`, content));
    }
    await Promise.all(writes);
    git(large, "add", "-A");
    git(large, "commit", "-q", "-m", "many files");
  });

  it("holds every budget from 256 to 8,192 tokens, showing more as the budget grows, and says what it left out", async () => {
    let previous = 0;
    for (const tokens of [256, 512, 1024, 2048, 4096, 8192]) {
      const map = (await repoMap({}, large, "plan", { repoMap: { tokens } })).content;
      expect(countTokens(map)).toBeLessThanOrEqual(tokens);
      expect(countTokens(map)).toBeGreaterThan(tokens * 0.7);
      const shown = map.split("\n").filter((line) => /^ *\d+│/.test(line)).length;
      expect(shown).toBeGreaterThan(previous);
      previous = shown;
      expect(map).toMatch(/^Repository map: 1500 tracked files/);
      expect(map).toMatch(/\n… \d+ more files not shown; call repo_map with focus/);
    }
  });

  it("brings a focused symbol to the top even among 1,500 files", async () => {
    const map = (await repoMap({ focus: "helper1499" }, large)).content;
    expect(filesInOrder(map)[0]).toBe("pkg59/module1499.ts");
    expect(definitionsOf(map, "pkg59/module1499.ts")).toContainEqual([4, "export function helper1499() {}"]);
  });
});
