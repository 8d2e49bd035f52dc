import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { HeadReader, MAX_FILE_BYTES, TAIL_BYTES } from "../../../src/tools/repo-map/read-head.js";
import { outlineFile } from "../../../src/tools/repo-map/outline-file.js";
import { write } from "./helpers.js";

let base: string;
let root: string;

beforeAll(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), "bp-map-read-"));
  root = path.join(base, "repo");
  await write(root, "src/app.ts", "export const app = 1;\n");
  await write(
    root,
    "src/huge.ts",
    `${"// padding\n".repeat(Math.ceil((MAX_FILE_BYTES + 4096) / 11))}// the last line\n`,
  );
  await write(root, "assets/logo.png", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]));
  await write(base, "outside/secret.ts", "export const secret = 1;\n");
  // A folder swapped for a link out of the workspace after checkout, and a file linked likewise.
  await fs.symlink(path.join(base, "outside"), path.join(root, "linked"));
  await fs.symlink(path.join(base, "outside", "secret.ts"), path.join(root, "src", "leak.ts"));
  execFileSync("mkfifo", [path.join(root, "src", "pipe.ts")]);
});

afterAll(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

describe("repo_map's reader of file heads", () => {
  it("reads a file, and only the head of a huge one, saying so", () => {
    const reader = new HeadReader(root);
    expect(reader.read("src/app.ts")).toEqual({ text: "export const app = 1;\n" });
    const huge = reader.read("src/huge.ts");
    expect(huge.large).toBe(true);
    expect(huge.note).toMatch(/^\d+ KB; outlined from the first 64 KB$/);
    expect(huge.text?.length).toBeLessThanOrEqual(MAX_FILE_BYTES);
    expect(huge.text?.endsWith("// padding\n")).toBe(true);
    // Its end is read too (where compilers put their source-map comment), and no more of it.
    expect(huge.tail?.endsWith("// padding\n// the last line\n")).toBe(true);
    expect(huge.tail).toHaveLength(TAIL_BYTES);
    expect(reader.read("src/app.ts").tail).toBeUndefined();
  });

  it("never reads through a symbolic link, of the file or of a folder on its path", () => {
    const reader = new HeadReader(root);
    expect(reader.read("src/leak.ts")).toEqual({ note: "symbolic link" });
    expect(reader.read("linked/secret.ts")).toEqual({ note: "not read: it leads outside the repository" });
    expect(reader.read("../outside/secret.ts")).toEqual({ note: "not read: it leads outside the repository" });
    expect(reader.read(".git/config")).toEqual({ note: "not read: it leads outside the repository" });
  });

  it("says why it has no text for deleted, binary and special files, without blocking on a FIFO", () => {
    const reader = new HeadReader(root);
    expect(reader.read("src/gone.ts")).toEqual({ note: "deleted in the working tree" });
    expect(reader.read("gone/too.ts")).toEqual({ note: "deleted in the working tree" });
    expect(reader.read("assets/logo.png")).toEqual({ note: "binary" });
    expect(reader.read("src/pipe.ts")).toEqual({});
  });

  it("marks what the worktree kept from being read as the worktree's, not the blob's (never cached), and binary as the blob's", async () => {
    const reader = new HeadReader(root);
    expect(await outlineFile(reader, { path: "src/gone.ts" }, undefined)).toEqual({
      note: "deleted in the working tree",
      worktree: true,
    });
    expect(await outlineFile(reader, { path: "linked/secret.ts" }, undefined)).toEqual({
      note: "not read: it leads outside the repository",
      worktree: true,
    });
    expect(await outlineFile(reader, { path: "src/pipe.ts" }, undefined)).toEqual({ worktree: true });
    expect(await outlineFile(reader, { path: "assets/logo.png" }, undefined)).toEqual({ note: "binary" });
    expect((await outlineFile(reader, { path: "src/app.ts" }, undefined)).worktree).toBeUndefined();
  });
});
