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

const edit = (args: unknown, ctx = context()) => dispatchToolCall("edit_file", JSON.stringify(args), ctx);
const read = (file: string) => fs.readFile(path.join(root, file), "utf8");

const SOURCE = [
  "export function retry(times: number) {", // 1
  "  let attempt = 0;", // 2
  "  while (attempt < times) {", // 3
  "    attempt++;", // 4
  "  }", // 5
  "  return attempt;", // 6
  "}", // 7
  "", // 8
  "export const delay = 100;", // 9
  "export const TODO = 'x'; // TODO", // 10
  "// TODO: more", // 11
  "",
].join("\n");

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "bp-edit-"));
  git("init", "-q");
  await fs.mkdir(path.join(root, "src"));
  await fs.writeFile(path.join(root, "src", "retry.ts"), SOURCE);
  await fs.mkdir(path.join(root, ".github", "workflows"), { recursive: true });
  await fs.writeFile(path.join(root, ".github", "workflows", "ci.yml"), "on: push\n");
  git("add", "-A");
  git("commit", "-q", "-m", "init");
});

afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

describe("edit_file", () => {
  it("replaces an exact unique match and records it in the audit log", async () => {
    const ctx = context();
    const result = await edit(
      { path: "src/retry.ts", old_string: "export const delay = 100;", new_string: "export const delay = 250;" },
      ctx,
    );
    expect(result.content).toMatch(/^Edited src\/retry\.ts: 1 replacement\(s\) at line 9\./);
    expect(await read("src/retry.ts")).toBe(SOURCE.replace("delay = 100", "delay = 250"));
    expect(ctx.audit).toEqual([{ action: "edit", target: "src/retry.ts", detail: "1 replacement(s)" }]);
  });

  it("inserts a replacement containing $ patterns literally", async () => {
    await edit({ path: "src/retry.ts", old_string: "return attempt;", new_string: "return `$&${attempt}$1`;" });
    expect(await read("src/retry.ts")).toContain("  return `$&${attempt}$1`;\n");
  });

  it("reports a missing match with Error: and the closest lines", async () => {
    const result = await edit({ path: "src/retry.ts", old_string: "  while (attempt <= times) {", new_string: "x" });
    expect(result.content.startsWith("Error:")).toBe(true);
    expect(result.content).toContain("was not found in src/retry.ts");
    expect(result.content).toContain("3:   while (attempt < times) {");
    expect(await read("src/retry.ts")).toBe(SOURCE);
  });

  it("says so when nothing is similar", async () => {
    const result = await edit({ path: "src/retry.ts", old_string: "zzzzqqqq", new_string: "x" });
    expect(result.content).toMatch(/^Error: .*No similar line exists/s);
  });

  it("refuses several matches and names their line numbers", async () => {
    const result = await edit({ path: "src/retry.ts", old_string: "TODO", new_string: "DONE" });
    expect(result.content.startsWith("Error:")).toBe(true);
    expect(result.content).toContain("matches 3 times");
    expect(result.content).toContain("lines 10, 10, 11");
    expect(result.content).toContain("replace_all");
    expect(await read("src/retry.ts")).toBe(SOURCE);
  });

  it("replaces every match with replace_all", async () => {
    const result = await edit({ path: "src/retry.ts", old_string: "attempt", new_string: "tries", replace_all: true });
    expect(result.content).toMatch(/^Edited src\/retry\.ts: 4 replacement\(s\) at line 2\./);
    const text = await read("src/retry.ts");
    expect(text).not.toContain("attempt");
    expect(text.match(/tries/g)).toHaveLength(4);
  });

  it("accepts replace_all: null as not set", async () => {
    const result = await edit({
      path: "src/retry.ts",
      old_string: "delay = 100",
      new_string: "delay = 1",
      replace_all: null,
    });
    expect(result.content.startsWith("Edited")).toBe(true);
  });

  it("refuses a file that does not exist", async () => {
    const result = await edit({ path: "src/nope.ts", old_string: "a", new_string: "b" });
    expect(result.content).toMatch(/^Error: src\/nope\.ts does not exist; use write_file/);
  });

  it("refuses identical old and new strings", async () => {
    const result = await edit({ path: "src/retry.ts", old_string: "delay", new_string: "delay" });
    expect(result.content.startsWith("Error:")).toBe(true);
  });

  it("refuses workflow files without the workflows permission and allows them with it", async () => {
    const refused = await edit({ path: ".github/workflows/ci.yml", old_string: "push", new_string: "pull_request" });
    expect(refused.content).toMatch(/^Error: .*workflows/);
    expect(await read(".github/workflows/ci.yml")).toBe("on: push\n");

    const allowed = await edit(
      { path: ".github/workflows/ci.yml", old_string: "push", new_string: "pull_request" },
      context({ allowWorkflowWrites: true }),
    );
    expect(allowed.content.startsWith("Edited")).toBe(true);
    expect(await read(".github/workflows/ci.yml")).toBe("on: pull_request\n");
  });

  it("refuses to edit in plan mode, naming plan mode", async () => {
    const result = await edit({ path: "src/retry.ts", old_string: "100", new_string: "1" }, context({ mode: "plan" }));
    expect(result.content).toMatch(/^Error: .*plan mode/);
    expect(await read("src/retry.ts")).toBe(SOURCE);
  });

  it("refuses paths outside the workspace", async () => {
    const result = await edit({ path: "../../etc/passwd", old_string: "root", new_string: "x" });
    expect(result.content).toMatch(/^Error: .*leaves the repository/);
    const git = await edit({ path: ".git/config", old_string: "core", new_string: "x" });
    expect(git.content).toMatch(/^Error: .*\.git/);
  });

  it("returns Error: for invalid JSON and for missing or empty fields", async () => {
    const invalid = await dispatchToolCall("edit_file", "{path: src/retry.ts", context());
    expect(invalid.content).toMatch(/^Error: .*not valid JSON/);

    const missing = await edit({ path: "src/retry.ts", old_string: "delay" });
    expect(missing.content).toMatch(/^Error: invalid arguments for edit_file/);
    expect(missing.content).toContain("new_string");

    const empty = await edit({ path: "src/retry.ts", old_string: "", new_string: "x" });
    expect(empty.content).toMatch(/^Error: .*old_string must not be empty/s);
    expect(await read("src/retry.ts")).toBe(SOURCE);
  });

  it("refuses a named pipe at once, instead of blocking on it", async () => {
    const fifo = makeFifo(root, "notes.txt");
    onTestFinished(() => releaseFifo(fifo));
    const ctx = context();
    const result = await edit({ path: "notes.txt", old_string: "a", new_string: "b" }, ctx);
    expect(result.content).toMatch(/^Error: notes\.txt is not a regular file \(a named pipe\)/);
    expect(ctx.audit).toEqual([]);
  });

  it("refuses a file too large to hold in memory, and leaves it alone", async () => {
    await fs.writeFile(path.join(root, "huge.log"), "delay = 100\n");
    await fs.truncate(path.join(root, "huge.log"), 64 * 1024 * 1024);
    const ctx = context();
    const result = await edit({ path: "huge.log", old_string: "delay = 100", new_string: "delay = 1" }, ctx);
    expect(result.content).toBe(
      "Error: huge.log is 64.0 MB, more than edit_file handles (8.0 MB). Change a file this large with run_command (e.g. sed), or replace it with write_file.",
    );
    expect(ctx.audit).toEqual([]);
    expect((await fs.stat(path.join(root, "huge.log"))).size).toBe(64 * 1024 * 1024);
  });
});
