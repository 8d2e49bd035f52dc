// Bundles the GitHub Action (src/action.ts) into dist/index.js, which is committed: a runner runs
// it as it is, without npm install. test/action/dist-fresh.test.ts fails when it is stale.
import { build } from "esbuild";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

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
  banner: { js: "import { createRequire as __blueprintCreateRequire } from 'node:module';\nconst require = __blueprintCreateRequire(import.meta.url);" },
  legalComments: "eof",
  sourcemap: false,
  minify: false,
  // Deterministic: no absolute paths, no timestamps, the same bytes on every machine.
  metafile: false,
  charset: "utf8",
  logLevel: "warning",
};

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await build(actionBundleOptions);
  console.log("dist/index.js written");
}
