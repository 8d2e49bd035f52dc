// Bundles the GitHub Action (src/action.ts) into dist/index.js, which is committed: a runner runs
// it as it is, without npm install. test/action/dist-fresh.test.ts fails when it is stale.
// Beside it go repo_map's parser worker (dist/tag-worker.js) and, gzipped, the tree-sitter
// grammars and runtime it loads (dist/grammars/): without them the Action maps by regular expressions.
import { build } from "esbuild";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(path.join(root, "package.json"));

/** The one set of esbuild options, shared by this script and the freshness test. */
export const actionBundleOptions = {
  absWorkingDir: root,
  entryPoints: ["src/action.ts"],
  outfile: "dist/index.js",
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  // Bundled CommonJS packages call require() for Node's built-ins; ESM has none unless we make one.
  banner: {
    js: "import { createRequire as __blueprintCreateRequire } from 'node:module';\nconst require = __blueprintCreateRequire(import.meta.url);",
  },
  legalComments: "eof",
  sourcemap: false,
  minify: false,
  // Deterministic: no absolute paths, no timestamps, the same bytes on every machine.
  metafile: false,
  charset: "utf8",
  logLevel: "warning",
};

/**
 * repo_map's parser worker: src/tools/repo-map/tag-pool.ts starts ./tag-worker.js beside the bundle that imports it.
 */
export const workerBundleOptions = {
  ...actionBundleOptions,
  entryPoints: ["src/tools/repo-map/tag-worker.ts"],
  outfile: "dist/tag-worker.js",
};

/**
 * The grammar of each parsed language (PARSED_LANGUAGES in src/tools/repo-map/queries.ts; a test keeps the two lists
 * equal).
 */
export const GRAMMAR_FILES = [
  "tree-sitter-typescript.wasm",
  "tree-sitter-tsx.wasm",
  "tree-sitter-javascript.wasm",
  "tree-sitter-python.wasm",
  "tree-sitter-go.wasm",
  "tree-sitter-rust.wasm",
  "tree-sitter-java.wasm",
  "tree-sitter-c.wasm",
  "tree-sitter-cpp.wasm",
  "tree-sitter-c_sharp.wasm",
  "tree-sitter-ruby.wasm",
  "tree-sitter-php.wasm",
];

/**
 * Writes the parser worker and grammars beside a bundle in `outdir`. Gzipped, the grammars and the
 * runtime take 1.7 MB instead of 19 MB; src/tools/repo-map/parse-tags.ts inflates them as it loads
 * them. grammars/versions.json names the packages' versions, which key the persisted tag cache.
 */
export async function writeRepoMapAssets(outdir) {
  await build({ ...workerBundleOptions, outfile: path.join(outdir, "tag-worker.js") });
  const grammars = path.join(outdir, "grammars");
  mkdirSync(grammars, { recursive: true });
  const files = [
    ...GRAMMAR_FILES.map((file) => [file, require.resolve(`@repomix/tree-sitter-wasms/out/${file}`)]),
    ["web-tree-sitter.wasm", require.resolve("web-tree-sitter/web-tree-sitter.wasm")],
  ];
  for (const [file, source] of files)
    writeFileSync(path.join(grammars, `${file}.gz`), gzipSync(readFileSync(source), { level: 9 }));
  // web-tree-sitter exports no package.json: its manifest sits beside its main file.
  const manifest = (name) =>
    name === "web-tree-sitter"
      ? path.join(path.dirname(require.resolve(name)), "package.json")
      : require.resolve(`${name}/package.json`);
  const versions = Object.fromEntries(
    ["@repomix/tree-sitter-wasms", "web-tree-sitter"].map((name) => [
      name,
      JSON.parse(readFileSync(manifest(name), "utf8")).version,
    ]),
  );
  writeFileSync(path.join(grammars, "versions.json"), `${JSON.stringify(versions, null, 2)}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await build(actionBundleOptions);
  await writeRepoMapAssets(path.join(root, "dist"));
  console.log("dist/index.js, dist/tag-worker.js and dist/grammars/ written");
}
