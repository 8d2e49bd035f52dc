import type { BuildOptions } from "esbuild";

export const actionBundleOptions: BuildOptions;
