import { readFileSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { actionBundleOptions } from "../../scripts/build-action.mjs";

describe("dist/index.js", () => {
  it("is the bundle of the current source (the Action runs the committed file as it is)", async () => {
    const result = await build({ ...actionBundleOptions, write: false });
    const fresh = result.outputFiles.find((file) => file.path === path.resolve("dist/index.js"));
    expect(fresh, "esbuild wrote no dist/index.js").toBeDefined();
    const committed = readFileSync("dist/index.js", "utf8");
    expect(fresh?.text === committed, "stale dist/: run npm run build:action").toBe(true);
  });

  it("is built the same way twice (no timestamps or machine paths)", async () => {
    const [first, second] = await Promise.all([build({ ...actionBundleOptions, write: false }), build({ ...actionBundleOptions, write: false })]);
    expect(first.outputFiles[0]?.hash).toBe(second.outputFiles[0]?.hash);
    expect(first.outputFiles[0]?.text).not.toContain(process.cwd());
  });
});
