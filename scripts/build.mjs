// `npm run build`: src/ to lib/, one JavaScript file (and its source map) per TypeScript file, by esbuild.
// esbuild only strips types: tsc checks them (`npm run typecheck`, and `npm test` runs it), with
// `isolatedModules` on so that every file means the same translated alone, as esbuild translates it.
// It takes a second where tsc's emit took fifteen; lib/ is emptied first, so no deleted file's output stays.
import { build } from "esbuild";
import { readdirSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const sources = readdirSync(path.join(root, "src"), { recursive: true, encoding: "utf8" })
  .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
  .map((file) => path.join("src", file));

rmSync(path.join(root, "lib"), { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: sources,
  outdir: "lib",
  outbase: "src",
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: true,
  logLevel: "warning",
});
