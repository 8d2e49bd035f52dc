import { readFileSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { actionBundleOptions, workerBundleOptions } from "../../scripts/build-action.mjs";

describe("dist/index.js", () => {
  it("is the bundle of the current source (the Action runs the committed file as it is)", async () => {
    const result = await build({ ...actionBundleOptions, write: false });
    const fresh = result.outputFiles.find((file) => file.path === path.resolve("dist/index.js"));
    expect(fresh, "esbuild wrote no dist/index.js").toBeDefined();
    const committed = readFileSync("dist/index.js", "utf8");
    expect(fresh?.text === committed, "stale dist/: run npm run build:action").toBe(true);
  });

  it("has repo_map's parser worker beside it, fresh too (without it the Action maps by regular expressions)", async () => {
    const result = await build({ ...workerBundleOptions, write: false });
    const fresh = result.outputFiles.find((file) => file.path === path.resolve("dist/tag-worker.js"));
    expect(fresh, "esbuild wrote no dist/tag-worker.js").toBeDefined();
    expect(fresh?.text === readFileSync("dist/tag-worker.js", "utf8"), "stale dist/: run npm run build:action").toBe(
      true,
    );
  });

  it("is built the same way twice (no timestamps or machine paths)", async () => {
    const [first, second] = await Promise.all([
      build({ ...actionBundleOptions, write: false }),
      build({ ...actionBundleOptions, write: false }),
    ]);
    expect(first.outputFiles[0]?.hash).toBe(second.outputFiles[0]?.hash);
    expect(first.outputFiles[0]?.text).not.toContain(process.cwd());
  });
});
