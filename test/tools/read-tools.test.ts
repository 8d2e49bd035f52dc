import { beforeAll, afterAll, describe, expect, it, onTestFinished } from "vitest";
import { execFileSync } from "node:child_process";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { dispatchToolCall } from "../../src/tools/registry.js";
import { createCommandRunner } from "../../src/workspace/command-runner.js";
import type { ToolContext } from "../../src/tools/tool.js";
import { makeFifo, releaseFifo } from "../helpers/fifo.js";

let root: string;

function git(...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=Test", "-c", "user.email=test@example.com", ...args], {
    cwd: root,
    encoding: "utf8",
  });
}

function context(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    root,
    mode: "plan",
    runner: createCommandRunner(),
    filesRead: new Set(),
    audit: [],
    allowWorkflowWrites: false,
    ...overrides,
  };
}

const call = (name: string, args: unknown, ctx = context()) => dispatchToolCall(name, JSON.stringify(args), ctx);

async function write(file: string, content: string) {
  await fs.mkdir(path.dirname(path.join(root, file)), { recursive: true });
  await fs.writeFile(path.join(root, file), content);
}

const BIG_LINES = 2500;

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "bp-read-"));
  git("init", "-q");
  await write("README.md", "# Demo\nretry support\n");
  await write("src/index.ts", "export { retry } from './lib/retry.js';\n");
  await write("src/lib/retry.ts", "export function retry() {\n  return 42;\n}\n");
  await write("src/lib/util.js", "module.exports = {};\n");
  await write("docs/guide.md", "Call retry() twice.\n");
  await write("big.txt", Array.from({ length: BIG_LINES }, (_, i) => `line ${i + 1}`).join("\n") + "\n");
  await write(".gitignore", "ignored/\n");
  git("add", "-A");
  git("commit", "-q", "-m", "init");
  // Untracked but not ignored: must be visible. Ignored: must not be.
  await write("src/lib/draft.ts", "// retry draft\n");
  await write("ignored/secret.ts", "retry secret\n");
});

afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

describe("read_file", () => {
  it("returns the file with a header and line numbers, and records the read", async () => {
    const ctx = context();
    const result = await call("read_file", { path: "src/lib/retry.ts" }, ctx);
    expect(result.content).toBe(
      "src/lib/retry.ts (3 lines)\n     1\texport function retry() {\n     2\t  return 42;\n     3\t}\n",
    );
    expect([...ctx.filesRead]).toEqual(["src/lib/retry.ts"]);
  });

  it("reads a line range, inclusive", async () => {
    const result = await call("read_file", { path: "big.txt", start_line: 10, end_line: 12 });
    const lines = result.content.split("\n");
    expect(lines[0]).toBe(`big.txt (${BIG_LINES} lines)`);
    expect(lines.slice(1, 4)).toEqual(["    10\tline 10", "    11\tline 11", "    12\tline 12"]);
    expect(result.content).not.toContain("line 13");
    expect(result.content).toContain("Showing lines 10-12 of 2500");
  });

  it("shows a large file as a window with a hint on how to read on", async () => {
    const result = await call("read_file", { path: "big.txt" });
    expect(result.content).toContain("  2000\tline 2000\n");
    expect(result.content).not.toContain("line 2001");
    expect(result.content).toContain("[Showing lines 1-2000 of 2500. Call read_file with start_line=2001");
  });

  it("reads on from the hint's start_line to the end", async () => {
    const result = await call("read_file", { path: "big.txt", start_line: 2001, end_line: null });
    expect(result.content).toContain("  2001\tline 2001\n");
    expect(result.content).toContain("  2500\tline 2500\n");
    expect(result.content).toContain("[Showing lines 2001-2500 of 2500.]");
  });

  it("refuses a start_line past the end", async () => {
    const result = await call("read_file", { path: "src/lib/retry.ts", start_line: 10 });
    expect(result.content).toBe("Error: src/lib/retry.ts has only 3 lines; start_line 10 is past the end.");
  });

  it("refuses end_line before start_line, and start_line 0", async () => {
    expect((await call("read_file", { path: "big.txt", start_line: 5, end_line: 4 })).content).toMatch(/^Error:/);
    expect((await call("read_file", { path: "big.txt", start_line: 0 })).content).toMatch(/^Error: invalid arguments/);
  });

  it("refuses a directory and a missing file", async () => {
    expect((await call("read_file", { path: "src/lib" })).content).toMatch(/^Error: src\/lib is a directory/);
    expect((await call("read_file", { path: "src/missing.ts" })).content).toMatch(
      /^Error: src\/missing\.ts does not exist/,
    );
  });

  it("refuses paths outside the workspace", async () => {
    expect((await call("read_file", { path: "../../etc/passwd" })).content).toMatch(/^Error: .*leaves the repository/);
    expect((await call("read_file", { path: ".git/config" })).content).toMatch(/^Error: .*\.git/);
  });

  it("refuses a named pipe a command left in the workspace at once, instead of blocking on it", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "bp-read-fifo-"));
    const fifo = makeFifo(dir, "notes.txt");
    onTestFinished(() => releaseFifo(fifo));
    const result = await call("read_file", { path: "notes.txt" }, context({ root: dir }));
    expect(result.content).toMatch(/^Error: notes\.txt is not a regular file \(a named pipe\)/);
  });

  it("reads a window of a huge file without reading the whole file", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "bp-read-huge-"));
    onTestFinished(() => fs.rm(dir, { recursive: true, force: true }));
    const head = Array.from({ length: 1000 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
    await fs.writeFile(path.join(dir, "huge.log"), head);
    // 3 GiB, sparse: past what one Buffer can hold, so reading it whole cannot work.
    await fs.truncate(path.join(dir, "huge.log"), 3 * 1024 ** 3);
    const result = await call("read_file", { path: "huge.log", start_line: 998 }, context({ root: dir }));
    const lines = result.content.split("\n");
    expect(lines[0]).toBe("huge.log (3.0 GB)");
    expect(lines.slice(1, 4)).toEqual(["   998\tline 998", "   999\tline 999", "  1000\tline 1000"]);
    // The rest is one line of zeros, shown cut; the hint says how to read on.
    expect(lines[4]).toMatch(/^ {2}1001\t\0+ … \[line cut\]$/);
    expect(result.content).toMatch(
      /\[Showing lines 998-1001 of a file too large to count its lines\. Call read_file with start_line=1002/,
    );
  });
});

describe("list_files", () => {
  const listed = (content: string) => content.split("\n").slice(1);

  it("lists tracked and untracked files but not ignored ones", async () => {
    const result = await call("list_files", {});
    const files = listed(result.content);
    expect(files).toContain("README.md");
    expect(files).toContain("src/lib/draft.ts");
    expect(files).not.toContain("ignored/secret.ts");
    expect(result.content.split("\n")[0]).toBe(`${files.length} files`);
  });

  it('matches "*.ts" at any depth', async () => {
    const result = await call("list_files", { pattern: "*.ts" });
    expect(listed(result.content)).toEqual(["src/index.ts", "src/lib/draft.ts", "src/lib/retry.ts"]);
  });

  it("limits the listing to a path prefix", async () => {
    expect(listed((await call("list_files", { path: "src/lib" })).content)).toEqual([
      "src/lib/draft.ts",
      "src/lib/retry.ts",
      "src/lib/util.js",
    ]);
    expect(listed((await call("list_files", { path: "src/lib/", pattern: "*.js" })).content)).toEqual([
      "src/lib/util.js",
    ]);
  });

  it("accepts nulls for the optional arguments", async () => {
    const result = await call("list_files", { path: null, pattern: null });
    expect(listed(result.content)).toContain("docs/guide.md");
  });

  it("says so when nothing matches", async () => {
    const result = await call("list_files", { pattern: "*.rs" });
    expect(result.content).toMatch(/^No files match "\*\.rs"/);
  });
});

describe("search", () => {
  it("returns path:line:text for regex matches, including untracked files", async () => {
    const result = await call("search", { pattern: "retry\\(\\)" });
    const lines = result.content.split("\n");
    expect(lines[0]).toBe("2 matches");
    expect(lines).toContain("docs/guide.md:1:Call retry() twice.");
    expect(lines).toContain("src/lib/retry.ts:1:export function retry() {");
    expect(result.content).not.toContain("ignored/");
  });

  it("finds untracked files and honours path and glob", async () => {
    const result = await call("search", { pattern: "^// retry", path: "src" });
    expect(result.content).toBe("1 matches\nsrc/lib/draft.ts:1:// retry draft");
    const globbed = await call("search", { pattern: "retry", glob: "*.md" });
    expect(globbed.content.split("\n").slice(1).sort()).toEqual([
      "README.md:2:retry support",
      "docs/guide.md:1:Call retry() twice.",
    ]);
  });

  it("supports Perl-style classes", async () => {
    const result = await call("search", { pattern: "return \\d+;" });
    expect(result.content).toBe("1 matches\nsrc/lib/retry.ts:2:  return 42;");
  });

  it("reports no matches without an error", async () => {
    const result = await call("search", { pattern: "definitely_not_here_\\d{9}" });
    expect(result.content).toBe("No matches for /definitely_not_here_\\d{9}/.");
  });

  it("reports an invalid regular expression as Error:", async () => {
    const result = await call("search", { pattern: "retry(" });
    expect(result.content).toMatch(/^Error: the search failed: .*Check the regular expression\./);
  });

  it("refuses a missing pattern", async () => {
    expect((await call("search", {})).content).toMatch(/^Error: invalid arguments for search/);
  });

  it("stops git grep past its output cap and says so, instead of holding the whole output", async () => {
    // One line of 8 MiB that matches (a command can write one of 560 MiB): twice the cap, in one match.
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "bp-search-cap-"));
    onTestFinished(() => fs.rm(dir, { recursive: true, force: true }));
    execFileSync("git", ["init", "-q"], { cwd: dir });
    await fs.writeFile(path.join(dir, "huge.txt"), `${"a".repeat(8 * 1024 * 1024)}\nb\n`);
    await fs.writeFile(path.join(dir, "many.txt"), Array.from({ length: 5_000 }, (_, i) => `a ${i}`).join("\n"));
    const result = await call("search", { pattern: "a" }, context({ root: dir }));
    expect(result.content).toMatch(
      /^More than \d+ matches: the search was stopped after 4 MiB of results\. The first \d+:\n/,
    );
    expect(result.content.length).toBeLessThan(200 * 320);
    // The match cap per file (-m): 5,000 matching lines in one file give at most 1,000.
    const counted = await call("search", { pattern: "^a \\d+$" }, context({ root: dir }));
    expect(counted.content.split("\n")[0]).toBe("1000 matches");
  });
});
