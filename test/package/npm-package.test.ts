import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers/git-repo.js";

/** The npm package as it would be published (issue #30, point 5); CI also installs the packed tarball and runs it. */

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  bin: Record<string, string>;
  files: string[];
  scripts: Record<string, string>;
}

const manifest = JSON.parse(readFileSync("package.json", "utf8")) as Manifest;
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

describe("the npm package", () => {
  it("can be published, under its own name, with the compiled CLI as `blueprint`", () => {
    expect(manifest.private).toBeUndefined();
    expect(manifest.name).toBe("blueprint-plan-gate");
    expect(manifest.bin).toEqual({ blueprint: "./lib/cli.js" });
    // The compiled CLI starts with the line that lets npm's bin link run it.
    expect(readFileSync("src/cli.ts", "utf8").split("\n")[0]).toBe("#!/usr/bin/env node");
    expect(readFileSync("lib/cli.js", "utf8").split("\n")[0]).toBe("#!/usr/bin/env node");
  });

  it("ships the processes it starts again and again as bundles that import only Node's built-ins", () => {
    // The CLI (a process per command) and the children an intake or a worker forks are bundled to start faster
    // (scripts/build.mjs): a relative import would mean the bundle was not made, and a package one a package
    // loaded file by file on every start.
    const importsOf = (file: string) =>
      [...readFileSync(file, "utf8").matchAll(/^import\b[^;]*?from\s*["']([^"']+)["']/gm)]
        .map(([, specifier]) => specifier)
        .filter((specifier) => !specifier?.startsWith("node:"));
    for (const entry of ["cli", "job-runner", "local-worker", "worker"])
      expect(importsOf(`lib/${entry}.js`)).toEqual([]);
    // repo_map's parser worker is beside them; it loads the parser's package, which finds its .wasm beside itself.
    expect(importsOf("lib/tag-worker.js")).toEqual(["web-tree-sitter"]);
  });

  it("packs only what runs: the compiled lib/, app.yml, the README and package.json", () => {
    const [packed] = JSON.parse(
      execFileSync(npm, ["pack", "--dry-run", "--json", "--ignore-scripts"], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      }),
    ) as Array<{ files: Array<{ path: string }> }>;
    const files = (packed?.files ?? []).map((file) => file.path);
    expect(files).toEqual(
      expect.arrayContaining([
        "lib/cli.js",
        "lib/index.js",
        "lib/start.js",
        "lib/tools/repo-map/tag-worker.js",
        "lib/tag-worker.js",
        "app.yml",
        "README.md",
        "package.json",
      ]),
    );
    expect(files.filter((file) => !/^lib\/.*\.js$/.test(file)).sort()).toEqual([
      "README.md",
      "app.yml",
      "package.json",
    ]);
  });

  it("prepack builds when lib/ is missing, and leaves a built lib/ alone", () => {
    const dir = tempDir("blueprint-prepack-");
    // The real prepack script, with a build that leaves a mark instead of compiling.
    const build =
      "node -e \"require('node:fs').mkdirSync('lib',{recursive:true});require('node:fs').writeFileSync('lib/cli.js','built');require('node:fs').appendFileSync('builds','x')\"";
    writeFileSync(
      path.join(dir, "package.json"),
      JSON.stringify({
        name: "prepack-check",
        version: "1.0.0",
        scripts: { build, prepack: manifest.scripts.prepack },
      }),
    );
    const prepack = () => spawnSync(npm, ["run", "--silent", "prepack"], { cwd: dir, encoding: "utf8" });
    expect(prepack().status).toBe(0);
    expect(readFileSync(path.join(dir, "lib", "cli.js"), "utf8")).toBe("built");
    expect(prepack().status).toBe(0);
    expect(readFileSync(path.join(dir, "builds"), "utf8")).toBe("x");
    expect(existsSync(path.join(dir, "lib", "cli.js"))).toBe(true);
  });
});
