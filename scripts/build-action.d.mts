import type { BuildOptions } from "esbuild";

/** The Action's bundle (src/action.ts → dist/index.js), shared by the build script and the freshness test. */
export const actionBundleOptions: BuildOptions;
/** repo_map's parser worker (src/tools/repo-map/tag-worker.ts → dist/tag-worker.js), built like the Action. */
export const workerBundleOptions: BuildOptions;
/** The tree-sitter grammar file of each parsed language (PARSED_LANGUAGES in src/tools/repo-map/queries.ts). */
export const GRAMMAR_FILES: readonly string[];
/** Writes the parser worker, the gzipped grammars and runtime, and grammars/versions.json into `outdir`. */
export function writeRepoMapAssets(outdir: string): Promise<void>;
