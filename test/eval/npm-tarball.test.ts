import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchPackage } from "../../eval/npm-tarball.js";
import { tempDir } from "../helpers/git-repo.js";
import { startPackageRegistry, type PackageRegistry } from "../helpers/registry-double.js";
import { closedPort } from "./support.js";

describe("fetching a published package for the smoke suite (a registry double on 127.0.0.1)", () => {
  let registry: PackageRegistry;
  const caches: string[] = [];
  const cache = () => {
    const dir = tempDir("blueprint-eval-cache-");
    caches.push(dir);
    return dir;
  };

  beforeAll(async () => {
    registry = await startPackageRegistry([
      {
        name: "tiny-left-pad",
        version: "1.0.0",
        files: { "index.js": "module.exports = (s, n) => ' '.repeat(n) + s;\n", "lib/util.js": "exports.x = 1;\n" },
      },
      {
        name: "tiny-left-pad",
        version: "1.0.1",
        files: { "index.js": "module.exports = (s, n) => ' '.repeat(Math.max(0, n - s.length)) + s;\n" },
      },
    ]);
  });
  afterAll(async () => {
    await registry.close();
    for (const dir of caches) rmSync(dir, { recursive: true, force: true });
  });

  it("unpacks the version into the cache, and a second fetch makes no request at all", async () => {
    const cacheDir = cache();
    const before = registry.requests.length;
    const dir = await fetchPackage("tiny-left-pad", "1.0.0", { registry: registry.url, cacheDir });
    expect(readFileSync(path.join(dir, "index.js"), "utf8")).toContain("' '.repeat(n)");
    expect(readFileSync(path.join(dir, "lib/util.js"), "utf8")).toBe("exports.x = 1;\n");
    expect(JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"))).toMatchObject({
      name: "tiny-left-pad",
      version: "1.0.0",
    });
    expect(registry.requests.slice(before)).toEqual(["/tiny-left-pad", "/tiny-left-pad/-/tiny-left-pad-1.0.0.tgz"]);
    expect(readFileSync(`${dir}.integrity`, "utf8")).toMatch(/^sha512-/);

    // Another eval, same cache: the tarball is checked against the integrity kept with it; no HTTP.
    rmSync(dir, { recursive: true });
    expect(await fetchPackage("tiny-left-pad", "1.0.0", { registry: registry.url, cacheDir })).toBe(dir);
    expect(existsSync(path.join(dir, "index.js"))).toBe(true);
    expect(registry.requests.length - before).toBe(2);

    // A cached tarball that no longer matches what was recorded is fetched again.
    writeFileSync(`${dir}.tgz`, "damaged");
    await fetchPackage("tiny-left-pad", "1.0.0", { registry: registry.url, cacheDir });
    expect(registry.requests.length - before).toBe(4);
    expect(readFileSync(path.join(dir, "index.js"), "utf8")).toContain("' '.repeat(n)");
  });

  it("fetches a version two tasks ask for at once only once (one's later version is the other's earlier)", async () => {
    const source = { registry: registry.url, cacheDir: cache() };
    const before = registry.requests.length;
    const [first, second] = await Promise.all([
      fetchPackage("tiny-left-pad", "1.0.1", source),
      fetchPackage("tiny-left-pad", "1.0.1", source),
    ]);
    expect(second).toBe(first);
    expect(registry.requests.slice(before)).toEqual(["/tiny-left-pad", "/tiny-left-pad/-/tiny-left-pad-1.0.1.tgz"]);
  });

  it("refuses a tarball that does not match the registry's dist.integrity, and caches nothing", async () => {
    const cacheDir = cache();
    registry.tampered.add("tiny-left-pad@1.0.1");
    try {
      await expect(fetchPackage("tiny-left-pad", "1.0.1", { registry: registry.url, cacheDir })).rejects.toThrow(
        /^tiny-left-pad@1\.0\.1: the tarball from http:\/\/127\.0\.0\.1:\d+\/tiny-left-pad\/-\/tiny-left-pad-1\.0\.1\.tgz does not match the registry's dist\.integrity \(expected sha512-\S+, got sha512-\S+\); refused, nothing was cached$/,
      );
      expect(existsSync(path.join(cacheDir, "npm", "tiny-left-pad", "1.0.1.tgz"))).toBe(false);
    } finally {
      registry.tampered.delete("tiny-left-pad@1.0.1");
    }
    const dir = await fetchPackage("tiny-left-pad", "1.0.1", { registry: registry.url, cacheDir });
    expect(readFileSync(path.join(dir, "index.js"), "utf8")).toContain("Math.max");
  });

  it("says which version is missing and which the registry has, when the package is not there at all, and when the registry does not answer", async () => {
    const source = { registry: registry.url, cacheDir: cache() };
    await expect(fetchPackage("tiny-left-pad", "9.9.9", source)).rejects.toThrow(
      `tiny-left-pad@9.9.9: the registry ${registry.url} has no version 9.9.9 of tiny-left-pad (it has 1.0.0, 1.0.1)`,
    );
    await expect(fetchPackage("no-such-package", "1.0.0", source)).rejects.toThrow(
      `no-such-package@1.0.0: the registry ${registry.url} has no package no-such-package`,
    );
    const closed = `http://127.0.0.1:${await closedPort()}/`;
    await expect(fetchPackage("tiny-left-pad", "1.0.0", { ...source, registry: closed })).rejects.toThrow(
      `tiny-left-pad@1.0.0: could not reach ${closed}tiny-left-pad (fetch failed: connect ECONNREFUSED`,
    );
  });
});
