import { z } from "zod";
import { defineTool, toolError } from "./tool.js";
import { buildRepoMap } from "./repo-map/build-map.js";
import { threadMentions } from "./repo-map/focus.js";

const focusSchema = z
  .union([z.string().max(1000), z.array(z.string().max(300)).max(50)], {
    error: "must be a string or an array of strings (directories, file paths, file names or symbol names)",
  })
  .nullish()
  .describe('Directories, file paths, file names or symbol names to rank first, e.g. ["src/tools", "retry"].');

export const repoMapTool = defineTool({
  name: "repo_map",
  description:
    "A compact map of the repository to start exploring: the definitions (functions, classes, types, methods) that the rest of the code uses most, each with its line number and source line, grouped by file. Definitions and files matching focus come first. The map fits a token budget and says what it left out.",
  schema: z.object({ focus: focusSchema }),
  modes: ["plan", "build"],
  async run(args, context) {
    try {
      const map = await buildRepoMap(context.root, {
        focus: args.focus,
        tokens: context.repoMap?.tokens,
        mentions: context.repoMap?.thread ? threadMentions(context.repoMap.thread) : undefined,
        tagCacheDir: context.repoMap?.tagCacheDir,
        signal: context.signal,
      });
      return { content: map.text };
    } catch (error) {
      if (context.signal?.aborted) throw error;
      return toolError(`mapping the repository failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  },
});
