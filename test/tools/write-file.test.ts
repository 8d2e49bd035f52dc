import { afterEach, beforeEach, describe, expect, it, onTestFinished } from "vitest";
import { execFileSync } from "node:child_process";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { dispatchToolCall } from "../../src/tools/registry.js";
import { createCommandRunner } from "../../src/workspace/command-runner.js";
import type { ToolContext } from "../../src/tools/tool.js";
import { makeFifo, releaseFifo } from "../helpers/fifo.js";

let root: string;
let outside: string;

function git(...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=Test", "-c", "user.email=test@example.com", ...args], {
    cwd: root,
    encoding: "utf8",
  });
}

function context(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    root,
    mode: "build",
    runner: createCommandRunner(),
    filesRead: new Set(),
    audit: [],
    allowWorkflowWrites: false,
    ...overrides,
  };
}

const call = (name: string, args: unknown, ctx = context()) => dispatchToolCall(name, JSON.stringify(args), ctx);
const exists = (file: string) =>
  fs.lstat(path.join(root, file)).then(
    () => true,
    () => false,
  );

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "bp-write-"));
  outside = await fs.mkdtemp(path.join(os.tmpdir(), "bp-outside-"));
  git("init", "-q");
  await fs.writeFile(path.join(root, "README.md"), "# hello\n");
  git("add", "-A");
  git("commit", "-q", "-m", "init");
});

afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
  await fs.rm(outside, { recursive: true, force: true });
});

describe("write_file", () => {
  it("creates a new file in new directories and records it", async () => {
    const ctx = context();
    const result = await call("write_file", { path: "src/deep/new.ts", content: "a\nb\n" }, ctx);
    expect(result.content).toBe("Created src/deep/new.ts (3 lines).");
    expect(await fs.readFile(path.join(root, "src/deep/new.ts"), "utf8")).toBe("a\nb\n");
    expect(ctx.audit).toEqual([{ action: "write", target: "src/deep/new.ts", detail: "4 bytes" }]);
    expect(git("status", "--porcelain")).toContain("?? src/");
  });

  it("replaces an existing file", async () => {
    const result = await call("write_file", { path: "README.md", content: "# bye\n" });
    expect(result.content).toMatch(/^Replaced README\.md/);
    expect(await fs.readFile(path.join(root, "README.md"), "utf8")).toBe("# bye\n");
  });

  it("refuses a directory and the repository root", async () => {
    await fs.mkdir(path.join(root, "dir"));
    expect((await call("write_file", { path: "dir", content: "x" })).content).toMatch(/^Error: dir is a directory/);
    expect((await call("write_file", { path: ".", content: "x" })).content).toMatch(/^Error: .*root/);
  });

  it("refuses .github/workflows/ without the workflows permission", async () => {
    const result = await call("write_file", { path: ".github/workflows/ci.yml", content: "on: push\n" });
    expect(result.content).toMatch(/^Error: .*workflows/);
    expect(await exists(".github/workflows/ci.yml")).toBe(false);
  });

  it("writes under .github/workflows/ when allowed", async () => {
    const result = await call(
      "write_file",
      { path: ".github/workflows/ci.yml", content: "on: push\n" },
      context({ allowWorkflowWrites: true }),
    );
    expect(result.content).toMatch(/^Created/);
    expect(await exists(".github/workflows/ci.yml")).toBe(true);
  });

  it("refuses in plan mode with a message naming plan mode", async () => {
    const ctx = context({ mode: "plan" });
    const result = await call("write_file", { path: "new.txt", content: "x" }, ctx);
    expect(result.content.startsWith("Error:")).toBe(true);
    expect(result.content).toContain("plan mode");
    expect(await exists("new.txt")).toBe(false);
    expect(ctx.audit).toEqual([]);
  });

  it("refuses to write through a symlink that leaves the workspace", async () => {
    await fs.symlink(outside, path.join(root, "out"));
    const result = await call("write_file", { path: "out/evil.txt", content: "x" });
    expect(result.content).toMatch(/^Error: .*symbolic link/);
    expect(await fs.readdir(outside)).toEqual([]);
  });

  it("refuses to write through a dangling symlink pointing outside", async () => {
    const target = path.join(outside, "created-by-agent.txt");
    await fs.symlink(target, path.join(root, "dangling.txt"));
    const result = await call("write_file", { path: "dangling.txt", content: "x" });
    expect(result.content).toMatch(/^Error: .*symbolic link/);
    expect(await fs.readdir(outside)).toEqual([]);
  });

  it("refuses .git/ and absolute paths", async () => {
    expect((await call("write_file", { path: ".git/hooks/pre-commit", content: "x" })).content).toMatch(
      /^Error: .*\.git/,
    );
    expect((await call("write_file", { path: path.join(outside, "x"), content: "x" })).content).toMatch(
      /^Error: .*absolute/,
    );
    expect(await fs.readdir(outside)).toEqual([]);
  });

  it("returns Error: for invalid JSON, missing fields and wrong types", async () => {
    expect((await dispatchToolCall("write_file", "not json", context())).content).toMatch(/^Error: .*not valid JSON/);
    const missing = await call("write_file", { path: "a.txt" });
    expect(missing.content).toMatch(/^Error: invalid arguments for write_file/);
    expect(missing.content).toContain("content");
    const wrong = await call("write_file", { path: 42, content: "x" });
    expect(wrong.content).toMatch(/^Error: invalid arguments for write_file/);
    expect(await exists("a.txt")).toBe(false);
  });

  it("refuses an unknown tool name", async () => {
    const result = await call("rm_rf", { path: "." });
    expect(result.content).toMatch(/^Error: there is no tool named "rm_rf"/);
  });
});

describe("delete_file", () => {
  it("deletes a file in build mode and refuses in plan mode", async () => {
    const refused = await call("delete_file", { path: "README.md" }, context({ mode: "plan" }));
    expect(refused.content).toMatch(/^Error: .*plan mode/);
    expect(await exists("README.md")).toBe(true);

    const ctx = context();
    const done = await call("delete_file", { path: "README.md" }, ctx);
    expect(done.content).toBe("Deleted README.md.");
    expect(await exists("README.md")).toBe(false);
    expect(ctx.audit).toEqual([{ action: "delete", target: "README.md" }]);
  });

  it("refuses a file that does not exist", async () => {
    expect((await call("delete_file", { path: "nope.txt" })).content).toMatch(/^Error: nope\.txt does not exist/);
  });
});

describe("write_file and a named pipe", () => {
  it("refuses to write over a named pipe, instead of blocking until something reads it", async () => {
    const fifo = makeFifo(root, "notes.txt");
    onTestFinished(() => releaseFifo(fifo));
    const ctx = context();
    const result = await call("write_file", { path: "notes.txt", content: "hello\n" }, ctx);
    expect(result.content).toMatch(/^Error: notes\.txt is not a regular file \(a named pipe\)/);
    expect(ctx.audit).toEqual([]);
  });
});
