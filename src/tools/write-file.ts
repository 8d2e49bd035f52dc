import { promises as fs } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { defineTool, toolError, type ToolContext } from "./tool.js";
import { isWorkflowPath, resolveInWorkspace, type ResolvedPath } from "./paths.js";
import { notRegularFileProblem, WRITE_FLAGS } from "./regular-file.js";

/** Resolves a path the model wants to change, applying the rules that only concern writes. */
export async function resolveForWrite(context: ToolContext, requested: string): Promise<ResolvedPath | string> {
  const target = await resolveInWorkspace(context.root, requested);
  if (target.relative === ".") return "the repository root is not a file";
  if (isWorkflowPath(target.relative) && !context.allowWorkflowWrites) {
    return `${target.relative} is a GitHub Actions workflow; the app installation lacks the "workflows" permission, so Blueprint may not change it`;
  }
  return target;
}

export const writeFileTool = defineTool({
  name: "write_file",
  description: "Create a file or replace its whole content. Prefer edit_file for changes to existing files.",
  schema: z.object({ path: z.string().min(1), content: z.string() }),
  modes: ["build"],
  async run(args, context) {
    const target = await resolveForWrite(context, args.path);
    if (typeof target === "string") return toolError(target);
    const existing = await fs.lstat(target.absolute).catch(() => null);
    if (existing?.isDirectory()) return toolError(`${target.relative} is a directory`);
    const notRegular = existing ? await notRegularFileProblem(target.absolute, target.relative) : null;
    if (notRegular) return toolError(notRegular);
    await fs.mkdir(path.dirname(target.absolute), { recursive: true });
    await fs.writeFile(target.absolute, args.content, { flag: WRITE_FLAGS });
    context.audit.push({
      action: "write",
      target: target.relative,
      detail: `${Buffer.byteLength(args.content)} bytes`,
    });
    return {
      content: `${existing ? "Replaced" : "Created"} ${target.relative} (${args.content.split("\n").length} lines).`,
    };
  },
});

export const deleteFileTool = defineTool({
  name: "delete_file",
  description: "Delete a file of the repository.",
  schema: z.object({ path: z.string().min(1) }),
  modes: ["build"],
  async run(args, context) {
    const target = await resolveForWrite(context, args.path);
    if (typeof target === "string") return toolError(target);
    const existing = await fs.lstat(target.absolute).catch(() => null);
    if (!existing) return toolError(`${target.relative} does not exist`);
    if (existing.isDirectory())
      return toolError(`${target.relative} is a directory; delete the files in it one by one`);
    await fs.unlink(target.absolute);
    context.audit.push({ action: "delete", target: target.relative });
    return { content: `Deleted ${target.relative}.` };
  },
});
