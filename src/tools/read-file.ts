import { promises as fs } from "node:fs";
import { z } from "zod";
import { defineTool, toolError } from "./tool.js";
import { resolveInWorkspace } from "./paths.js";
import { looksBinary } from "./git-read.js";

/** Files longer than this come as a window with a hint on how to read on. */
export const READ_WINDOW_LINES = 2000;
const MAX_LINE_CHARS = 2000;
const MAX_RESULT_CHARS = 120_000;

const optionalLine = z.number().int().min(1).nullish();

export const readFileTool = defineTool({
  name: "read_file",
  description:
    "Read a text file of the repository, with line numbers. Large files come as a window: pass start_line/end_line (1-based, inclusive) to read another part.",
  schema: z.object({ path: z.string().min(1), start_line: optionalLine, end_line: optionalLine }),
  modes: ["plan", "build"],
  async run(args, context) {
    const target = await resolveInWorkspace(context.root, args.path);
    const stat = await fs.stat(target.absolute).catch(() => null);
    if (!stat) return toolError(`${target.relative} does not exist. Use list_files or search to find the right path.`);
    if (stat.isDirectory()) return toolError(`${target.relative} is a directory. Use list_files to see what it holds.`);
    const buffer = await fs.readFile(target.absolute);
    if (looksBinary(buffer)) return toolError(`${target.relative} is a binary file (${stat.size} bytes).`);
    context.filesRead.add(target.relative);

    const lines = buffer.toString("utf8").split("\n");
    if (lines.length > 1 && lines.at(-1) === "") lines.pop();
    const total = lines.length;
    const start = args.start_line ?? 1;
    if (start > Math.max(total, 1)) return toolError(`${target.relative} has only ${total} lines; start_line ${start} is past the end.`);
    const requestedEnd = args.end_line ?? start + READ_WINDOW_LINES - 1;
    if (requestedEnd < start) return toolError("end_line must not be smaller than start_line.");
    const end = Math.min(requestedEnd, total, start + READ_WINDOW_LINES - 1);

    let text = "";
    let shownEnd = start - 1;
    for (let n = start; n <= end; n++) {
      const line = lines[n - 1] ?? "";
      const shown = line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)} … [line cut]` : line;
      const next = `${String(n).padStart(6)}\t${shown}\n`;
      if (text.length + next.length > MAX_RESULT_CHARS) break;
      text += next;
      shownEnd = n;
    }
    const header = `${target.relative} (${total} lines)`;
    if (start === 1 && shownEnd === total) return { content: `${header}\n${text}` };
    const hint =
      shownEnd < total
        ? `\n[Showing lines ${start}-${shownEnd} of ${total}. Call read_file with start_line=${shownEnd + 1} to read on, or use search to find what you need.]`
        : `\n[Showing lines ${start}-${shownEnd} of ${total}.]`;
    return { content: `${header}\n${text}${hint}` };
  },
});
