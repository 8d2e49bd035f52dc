/** Files at least this big are judged by their line length; smaller ones cost little to outline. */
const MIN_JUDGED_BYTES = 16 * 1024;
/** Hand-written code averages well under 80 characters a line, long re-export lists a few hundred; minified bundles run to thousands. */
const MAX_AVERAGE_LINE = 1000;
const MINIFIED_NAME = /\.min\.[cm]?[jt]sx?$|[.-]bundle\.[cm]?js$/;
/** What compilers and bundlers write last in their output (tsc, esbuild, Babel, sass…): the file has its source elsewhere. */
const SOURCE_MAP_TRAILER = /(?:^|\n)[ \t]*(?:\/\/[#@] sourceMappingURL=\S*|\/\*[#@] sourceMappingURL=[^*]*\*\/)\s*$/;
/** Go's convention (`// Code generated … DO NOT EDIT.`) and `@generated`, in a comment near the top. */
const GENERATED_HEADER = /^[ \t]*(?:\/\/|\/\*|\*|#).*(?:\bCode generated\b.*\bDO NOT EDIT\b|@generated\b)/m;

/**
 * Why a file is left unoutlined as minified or generated, or undefined for source worth outlining.
 * Such files cost most of a cold map's parsing and add only noise (one-letter names, thousands of
 * definitions nobody reads, or copies of definitions whose source is elsewhere); they stay in the
 * map by name.
 */
export function generatedReason(path: string, text: string): string | undefined {
  if (MINIFIED_NAME.test(path)) return "minified; not outlined";
  if (SOURCE_MAP_TRAILER.test(text.slice(-512))) return "compiled output (it names a source map); not outlined";
  if (GENERATED_HEADER.test(text.slice(0, 1024))) return "generated (its header says so); not outlined";
  if (text.length < MIN_JUDGED_BYTES) return undefined;
  let lines = 1;
  for (let at = text.indexOf("\n"); at >= 0 && at < text.length - 1; at = text.indexOf("\n", at + 1)) lines++;
  return text.length / lines > MAX_AVERAGE_LINE ? "minified or generated (very long lines); not outlined" : undefined;
}
