import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { resolveInWorkspace, PathError, isWorkflowPath } from "../../src/tools/paths.js";

let root: string;
let realRoot: string;

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "bp-paths-"));
  realRoot = await fs.realpath(root);
  await fs.mkdir(path.join(root, "src", "lib"), { recursive: true });
  await fs.writeFile(path.join(root, "src", "lib", "a.ts"), "export {};\n");
  await fs.mkdir(path.join(root, ".git"));
  await fs.writeFile(path.join(root, ".git", "config"), "[core]\n");
});

afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

async function refusal(requested: string): Promise<PathError> {
  const error = await resolveInWorkspace(root, requested).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PathError);
  return error as PathError;
}

describe("resolveInWorkspace", () => {
  it("resolves a nested existing file", async () => {
    const resolved = await resolveInWorkspace(root, "src/lib/a.ts");
    expect(resolved).toEqual({ absolute: path.join(realRoot, "src", "lib", "a.ts"), relative: "src/lib/a.ts" });
  });

  it("normalises ./, redundant segments, backslashes and trailing slashes", async () => {
    expect((await resolveInWorkspace(root, "./src//lib/../lib/a.ts")).relative).toBe("src/lib/a.ts");
    expect((await resolveInWorkspace(root, "src\\lib\\a.ts")).relative).toBe("src/lib/a.ts");
    expect((await resolveInWorkspace(root, "src/lib/")).relative).toBe("src/lib");
  });

  it("treats an empty or missing path as the root", async () => {
    expect((await resolveInWorkspace(root, null)).relative).toBe(".");
    expect((await resolveInWorkspace(root, "  ")).relative).toBe(".");
  });

  it("accepts a file that does not exist yet, in directories that do not exist yet", async () => {
    const resolved = await resolveInWorkspace(root, "new/dir/file.ts");
    expect(resolved.relative).toBe("new/dir/file.ts");
    expect(resolved.absolute).toBe(path.join(realRoot, "new", "dir", "file.ts"));
  });

  it("refuses absolute paths", async () => {
    expect((await refusal("/etc/passwd")).message).toMatch(/absolute/);
    expect((await refusal(path.join(root, "src/lib/a.ts"))).message).toMatch(/absolute/);
  });

  it("refuses .. escapes", async () => {
    expect((await refusal("../x")).message).toMatch(/leaves the repository/);
    expect((await refusal("src/../../x")).message).toMatch(/leaves the repository/);
    expect((await refusal("..")).message).toMatch(/leaves the repository/);
  });

  it("refuses anything under .git/", async () => {
    expect((await refusal(".git/config")).message).toMatch(/\.git/);
    expect((await refusal(".git")).message).toMatch(/\.git/);
    expect((await refusal("src/../.git/hooks/pre-commit")).message).toMatch(/\.git/);
  });

  it("refuses a symlink to a directory outside the workspace", async () => {
    await fs.symlink(os.tmpdir(), path.join(root, "out"));
    expect((await refusal("out")).message).toMatch(/symbolic link/);
    expect((await refusal("out/evil.txt")).message).toMatch(/symbolic link/);
  });

  it("refuses a dangling symlink whose target lies outside", async () => {
    const target = path.join(os.tmpdir(), `bp-does-not-exist-${process.pid}-${Date.now()}`, "file.txt");
    await fs.symlink(target, path.join(root, "dangling"));
    expect((await refusal("dangling")).message).toMatch(/symbolic link/);
  });

  it("refuses a symlink that leads into .git/", async () => {
    await fs.symlink(".git", path.join(root, "sneaky"));
    expect((await refusal("sneaky/config")).message).toMatch(/\.git/);
  });

  it("accepts a symlink that stays inside the workspace", async () => {
    await fs.symlink("src/lib", path.join(root, "lib-link"));
    const resolved = await resolveInWorkspace(root, "lib-link/a.ts");
    expect(resolved.relative).toBe("lib-link/a.ts");
  });
});

describe("isWorkflowPath", () => {
  it("matches files under .github/workflows only", () => {
    expect(isWorkflowPath(".github/workflows/ci.yml")).toBe(true);
    expect(isWorkflowPath(".github/workflows")).toBe(true);
    expect(isWorkflowPath(".github/blueprint.yml")).toBe(false);
    expect(isWorkflowPath("docs/.github/workflows-notes.md")).toBe(false);
  });
});
