import { z } from "zod";
import { defineTool, toolError } from "./tool.js";
import { resolveInWorkspace } from "./paths.js";
import { gitFailure, gitRead, toPathspec } from "./git-read.js";

const MAX_MATCHES = 200;
const MAX_LINE_CHARS = 300;

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
    const base = ["grep", "-n", "-I", "--untracked", "--no-color", "--full-name"];
    let result = await gitRead(context.root, [...base, "-P", "-e", args.pattern, "--", spec]);
    if (result.code > 1 && /pcre|perl/i.test(result.stderr)) {
      result = await gitRead(context.root, [...base, "-E", "-e", args.pattern, "--", spec]);
    }
    if (result.code === 1) return { content: `No matches for /${args.pattern}/.` };
    if (result.code !== 0) return toolError(`the search failed: ${gitFailure(result, "grep")}. Check the regular expression.`);
    const lines = result.stdout.split("\n").filter(Boolean);
    const shown = lines
      .slice(0, MAX_MATCHES)
      .map((line) => (line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)} …` : line));
    const more = lines.length > shown.length ? `\n[${lines.length - shown.length} more matches; narrow the pattern, path or glob]` : "";
    return { content: `${lines.length} matches\n${shown.join("\n")}${more}` };
  },
});
