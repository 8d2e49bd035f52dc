import { z } from "zod";
import { defineTool, toolError } from "./tool.js";
import { resolveInWorkspace } from "./paths.js";
import { gitFailure, gitRead, toPathspec } from "./git-read.js";

const MAX_MATCHES = 200;
const MAX_LINE_CHARS = 300;
/** git grep stops at this many matching lines per file (`-m`), and is stopped past this much output. */
const MAX_MATCHES_PER_FILE = 1_000;
const MAX_OUTPUT_BYTES = 4 * 1024 * 1024;

export const searchTool = defineTool({
  name: "search",
  description:
    "Search file contents with a regular expression (git grep, Perl syntax), optionally under a path and/or in files matching a glob. Returns path:line:text.",
  schema: z.object({ pattern: z.string().min(1), path: z.string().nullish(), glob: z.string().nullish() }),
  modes: ["plan", "build"],
  async run(args, context) {
    const dir = await resolveInWorkspace(context.root, args.path);
    const prefix = dir.relative === "." ? "" : `${dir.relative}/`;
    const spec = toPathspec(prefix, args.glob);
    const base = ["grep", "-n", "-I", "--untracked", "--no-color", "--full-name", "-m", String(MAX_MATCHES_PER_FILE)];
    const cap = { maxOutputBytes: MAX_OUTPUT_BYTES };
    let result = await gitRead(context.root, [...base, "-P", "-e", args.pattern, "--", spec], cap);
    if (!result.truncated && result.code > 1 && /pcre|perl/i.test(result.stderr)) {
      result = await gitRead(context.root, [...base, "-E", "-e", args.pattern, "--", spec], cap);
    }
    if (result.truncated) return { content: stoppedSearch(result.stdout) };
    if (result.code === 1) return { content: `No matches for /${args.pattern}/.` };
    if (result.code !== 0)
      return toolError(`the search failed: ${gitFailure(result, "grep")}. Check the regular expression.`);
    const lines = result.stdout.split("\n").filter(Boolean);
    const shown = lines
      .slice(0, MAX_MATCHES)
      .map((line) => (line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)} …` : line));
    const more =
      lines.length > shown.length
        ? `\n[${lines.length - shown.length} more matches; narrow the pattern, path or glob]`
        : "";
    return { content: `${lines.length} matches\n${shown.join("\n")}${more}` };
  },
});

/** A search whose output passed MAX_OUTPUT_BYTES: the first matches, and why there are no more. */
function stoppedSearch(stdout: string): string {
  const lines = stdout.split("\n").slice(0, -1).filter(Boolean);
  const shown = lines
    .slice(0, MAX_MATCHES)
    .map((line) => (line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)} …` : line));
  const mib = MAX_OUTPUT_BYTES / 1024 / 1024;
  return `More than ${lines.length} matches: the search was stopped after ${mib} MiB of results. The first ${shown.length}:\n${shown.join("\n")}\n[narrow the pattern, path or glob]`;
}
