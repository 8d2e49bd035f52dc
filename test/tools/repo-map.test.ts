import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { dispatchToolCall, toolsForMode } from "../../src/tools/registry.js";
import { createCommandRunner } from "../../src/workspace/command-runner.js";
import type { ToolContext } from "../../src/tools/tool.js";

let base: string;
let root: string;

function git(dir: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=Test", "-c", "user.email=test@example.com", ...args], { cwd: dir, encoding: "utf8" });
}

function context(dir: string, overrides: Partial<ToolContext> = {}): ToolContext {
  return { root: dir, mode: "plan", runner: createCommandRunner(), filesRead: new Set(), audit: [], allowWorkflowWrites: false, ...overrides };
}

const repoMap = (args: unknown, dir = root, mode: "plan" | "build" = "plan") => dispatchToolCall("repo_map", JSON.stringify(args), context(dir, { mode }));

async function write(dir: string, file: string, content: string | Buffer) {
  await fs.mkdir(path.dirname(path.join(dir, file)), { recursive: true });
  await fs.writeFile(path.join(dir, file), content);
}

/** The lines of one file's entry: its name line and the symbol lines under it. */
function entryOf(map: string, dir: string, name: string): string[] {
  const lines = map.split("\n");
  let inDir = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    if (!line.startsWith(" ")) inDir = line === dir;
    else if (inDir && (line === `  ${name}` || line.startsWith(`  ${name} (`))) {
      const entry = [line];
      for (let j = i + 1; j < lines.length && (lines[j] ?? "").startsWith("    "); j++) entry.push(lines[j] ?? "");
      return entry;
    }
  }
  throw new Error(`${dir}${name} is not in the map:\n${map}`);
}

/** Position in the map of a file's name line (files are listed in relevance order within a directory). */
const positionOf = (map: string, name: string) => map.split("\n").findIndex((line) => line === `  ${name}` || line.startsWith(`  ${name} (`));

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
  "app/src/Util.kt": ["package app", "", "data class Point(val x: Int)", "", "fun distance(a: Point, b: Point): Double = 0.0", "", "object Registry {", "    fun register(name: String) {}", "}"].join("\n"),
  "lib/greeter.rb": ["require 'json'", "", "module Greeting", "  class Greeter", "    def hello(name)", "      name", "    end", "", "    def self.build", "    end", "  end", "end"].join("\n"),
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
  const big = ["export function firstHuge() {}", ...Array.from({ length: 9000 }, (_, i) => `// padding line ${i} ${"x".repeat(20)}`), "export function pastTheLimit() {}"];
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
  it("outlines TypeScript with line numbers, class members under their class", async () => {
    const map = (await repoMap({})).content;
    expect(entryOf(map, "src/lib/", "retry.ts")).toEqual([
      "  retry.ts",
      "    3: interface RetryOptions",
      "    7: type Backoff",
      "    9: function retry",
      "    13: class RetryPolicy",
      "    15:   method constructor",
      "    16:   method run",
      "    21: const DEFAULT_ATTEMPTS",
      "    22: function jitter",
      "    23: enum Mode",
    ]);
    expect(entryOf(map, "src/", "c.js")).toEqual(["  c.js", "    2: export helper"]);
  });

  it("outlines Python, Go, Rust, Java, Kotlin, Ruby and C headers with line numbers", async () => {
    const map = (await repoMap({ focus: null })).content;
    expect(entryOf(map, "tools/", "parse.py")).toEqual(["  parse.py", "    3: const MAX_DEPTH", "    5: class Parser", "    7:   method parse", "    12: function load_config"]);
    expect(entryOf(map, "server/", "main.go")).toEqual(["  main.go", "    5: struct Server", "    9: interface Handler", "    13: method Server.Start", "    17: function NewServer"]);
    expect(entryOf(map, "core/src/", "lib.rs")).toEqual([
      "  lib.rs",
      "    3: struct Config",
      "    7: impl Config",
      "    8:   fn new",
      "    13: fn helper",
      "    14: trait Store",
      "    15:   fn get",
      "    17: enum Kind",
    ]);
    expect(entryOf(map, "app/src/", "Main.java")).toEqual(["  Main.java", "    5: class Main", "    8:   method main", "    12:   method names"]);
    expect(entryOf(map, "app/src/", "Util.kt")).toEqual(["  Util.kt", "    3: class Point", "    5: fun distance", "    7: object Registry", "    8:   fun register"]);
    expect(entryOf(map, "lib/", "greeter.rb")).toEqual(["  greeter.rb", "    3: module Greeting", "    4:   class Greeter", "    5:   def hello", "    9:   def self.build"]);
    expect(entryOf(map, "include/", "buffer.h")).toEqual([
      "  buffer.h",
      "    2: macro BUFFER_H",
      "    4: struct buffer",
      "    8: typedef buffer_size_t",
      "    10: function buffer_append",
      "    11: function buffer_clear",
    ]);
  });

  it("lists files of unknown languages and binary files by name only", async () => {
    const map = (await repoMap({})).content;
    expect(entryOf(map, "docs/", "notes.txt")).toEqual(["  notes.txt"]);
    expect(entryOf(map, "./", "README.md")).toEqual(["  README.md"]);
    expect(entryOf(map, "assets/", "logo.png")).toEqual(["  logo.png"]);
    expect(map).not.toContain("notASymbol");
  });

  it("outlines only the head of a huge file and says so", async () => {
    const map = (await repoMap({})).content;
    const entry = entryOf(map, "gen/", "huge.ts");
    expect(entry[0]).toMatch(/^ {2}huge\.ts \(\d+ KB; outlined from the first 128 KB\)$/);
    expect(entry).toContain("    1: function firstHuge");
    expect(map).not.toContain("pastTheLimit");
  });

  it("lists tracked files only: not untracked or ignored ones, nothing from .git", async () => {
    const map = (await repoMap({})).content;
    expect(map).not.toContain("untracked.ts");
    expect(map).not.toContain("draftOnly");
    expect(map).not.toContain("ignored");
    expect(map).not.toMatch(/^\.git\//m);
    expect(map).not.toContain("HEAD");
    expect(map).toMatch(/^Repository map: 19 tracked files, most relevant first\./);
  });

  it("never reads through a symlink that leaves the workspace", async () => {
    const map = (await repoMap({ focus: "leak" })).content;
    expect(entryOf(map, "src/", "leak.ts")).toEqual(["  leak.ts (not read: it leads outside the repository)"]);
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

  it("ranks the files most imported by others first when there is no focus", async () => {
    const map = (await repoMap({})).content;
    const body = map.split("\n\n")[1] ?? "";
    // sleep.ts is imported by a.ts, b.ts, c.js and retry.ts; retry.ts only by b.ts.
    expect(body.split("\n").slice(0, 3)).toEqual(["src/lib/", "  sleep.ts", "    1: function sleep"]);
    expect(positionOf(map, "sleep.ts")).toBeLessThan(positionOf(map, "retry.ts"));
  });

  it("ranks files whose path matches the focus first", async () => {
    const map = (await repoMap({ focus: ["server/"] })).content;
    expect(map).toContain("(focus: server)");
    expect((map.split("\n\n")[1] ?? "").split("\n").slice(0, 2)).toEqual(["server/", "  main.go"]);
    const byName = (await repoMap({ focus: "Util.kt" })).content;
    expect((byName.split("\n\n")[1] ?? "").split("\n").slice(0, 2)).toEqual(["app/src/", "  Util.kt"]);
  });

  it("ranks files that define a focused symbol first, case-insensitively, and keeps that symbol in view", async () => {
    const map = (await repoMap({ focus: "LOAD_CONFIG" })).content;
    expect((map.split("\n\n")[1] ?? "").split("\n").slice(0, 2)).toEqual(["tools/", "  parse.py"]);
    const go = (await repoMap({ focus: ["start"] })).content;
    expect((go.split("\n\n")[1] ?? "").split("\n").slice(0, 2)).toEqual(["server/", "  main.go"]);
  });

  it("bounds the symbols per file, keeping a focused one in view", async () => {
    const plain = entryOf((await repoMap({})).content, "src/", "many.ts");
    expect(plain.slice(1)).toEqual([...Array.from({ length: 10 }, (_, i) => `    ${i + 1}: function fn${i + 1}`), "    … 40 more symbols"]);
    const focused = entryOf((await repoMap({ focus: ["fn50"] })).content, "src/", "many.ts");
    expect(focused).toHaveLength(1 + 40 + 1);
    expect(focused).toContain("    50: function fn50");
    expect(focused.at(-1)).toBe("    … 10 more symbols");
  });

  it("says when nothing matches the focus, and still maps the repository", async () => {
    const map = (await repoMap({ focus: "zzz_nothing_like_this" })).content;
    expect(map).toContain("Nothing matched the focus (zzz_nothing_like_this); showing the whole repository.");
    expect(map).toContain("  retry.ts");
  });

  it("refuses a focus of the wrong type with an Error: naming focus", async () => {
    for (const focus of [42, { path: "src" }, [1, 2], true]) {
      const result = await repoMap({ focus });
      expect(result.content).toMatch(/^Error: invalid arguments for repo_map:\n- focus: must be a string or an array of strings/);
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
    expect(Object.keys((tool?.function.parameters as { properties: Record<string, unknown> }).properties)).toEqual(["focus"]);
  });
});

describe("repo_map on a large repository", () => {
  let large: string;
  beforeAll(async () => {
    large = path.join(base, "large");
    await fs.mkdir(large);
    git(large, "init", "-q");
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 3000; i++) {
      const dir = `pkg${String(i % 60).padStart(2, "0")}`;
      const content = `export function handler${i}() {}\nexport function helper${i}() {}\nexport class Model${i} {}\n`;
      writes.push(write(large, `${dir}/module${i}.ts`, content));
    }
    await Promise.all(writes);
    git(large, "add", "-A");
    git(large, "commit", "-q", "-m", "many files");
  }, 60_000);

  it("stays within its budget and says what it left out", async () => {
    const started = Date.now();
    const map = (await repoMap({}, large)).content;
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(map.length).toBeLessThanOrEqual(8000);
    expect(map).toMatch(/^Repository map: 3000 tracked files/);
    const shown = map.split("\n").filter((line) => /^ {2}module\d+\.ts$/.test(line)).length;
    expect(shown).toBeGreaterThan(50);
    expect(map).toContain(`… ${3000 - shown} more files not shown; call repo_map with focus (a directory, file or symbol name) or use list_files to see them.`);
    expect(map).toMatch(/\n {2}in pkg\d\d\/ \(50\), pkg\d\d\/ \(50\), .* and \d+ more directories\n/);
    expect(map).toMatch(/… \d+ symbols of \d+ listed files left out/);
    expect(map).toContain("1000 source files were not outlined (only 2000 are read per call)");
  }, 30_000);

  it("brings a focused symbol to the top even among 3,000 files", async () => {
    const map = (await repoMap({ focus: "helper2999" }, large)).content;
    expect(map.length).toBeLessThanOrEqual(8000);
    expect((map.split("\n\n")[1] ?? "").split("\n").slice(0, 5)).toEqual(["pkg59/", "  module2999.ts", "    1: function handler2999", "    2: function helper2999", "    3: class Model2999"]);
  }, 30_000);
});
