import { z } from "zod";
import { defineTool, toolError } from "./tool.js";
import { resolveInWorkspace } from "./paths.js";
import { gitFailure, gitRead, toPathspec } from "./git-read.js";

const MAX_ENTRIES = 500;

export const listFilesTool = defineTool({
  name: "list_files",
  description:
    'List the repository\'s files (tracked and untracked, honouring .gitignore), optionally under a directory and/or matching a glob such as "**/*.ts".',
  schema: z.object({ path: z.string().nullish(), pattern: z.string().nullish() }),
  modes: ["plan", "build"],
  async run(args, context) {
    const dir = await resolveInWorkspace(context.root, args.path);
    const prefix = dir.relative === "." ? "" : `${dir.relative}/`;
    const spec = toPathspec(prefix, args.pattern);
    const result = await gitRead(context.root, ["ls-files", "--cached", "--others", "--exclude-standard", "--", spec]);
    if (result.code !== 0) return toolError(`listing failed: ${gitFailure(result, "ls-files")}`);
    const files = [...new Set(result.stdout.split("\n").filter(Boolean))].sort();
    if (files.length === 0)
      return { content: `No files match${args.pattern ? ` "${args.pattern}"` : ""} under ${dir.relative}.` };
    const shown = files.slice(0, MAX_ENTRIES);
    const more =
      files.length > shown.length ? `\n[${files.length - shown.length} more; narrow the path or pattern]` : "";
    return { content: `${files.length} files\n${shown.join("\n")}${more}` };
  },
});
