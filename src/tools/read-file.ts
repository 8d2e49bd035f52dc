import type { FileHandle } from "node:fs/promises";
import { z } from "zod";
import { timeLeft } from "../shared/deadline.js";
import { defineTool, toolError, type ToolContext } from "./tool.js";
import { resolveInWorkspace } from "./paths.js";
import { looksBinary } from "./looks-binary.js";
import { formatBytes, openRegularFile, readUpTo } from "./regular-file.js";

/** Files longer than this come as a window with a hint on how to read on. */
export const READ_WINDOW_LINES = 2000;
const MAX_LINE_CHARS = 2000;
const MAX_RESULT_CHARS = 120_000;
/** The file is read in chunks of this size: only the window's lines are kept, never the whole file. */
const CHUNK_BYTES = 1024 * 1024;
/** Up to this size a file is read to its end to count its lines; beyond, reading stops after the window. */
export const COUNT_LINES_LIMIT_BYTES = 32 * 1024 * 1024;
/** In a file above that size, a window ends after this many bytes (a line of a gigabyte is shown cut). */
const MAX_WINDOW_BYTES = 8 * 1024 * 1024;

const optionalLine = z.number().int().min(1).nullish();

export const readFileTool = defineTool({
  name: "read_file",
  description:
    "Read a text file of the repository, with line numbers. Large files come as a window: pass start_line/end_line (1-based, inclusive) to read another part.",
  schema: z.object({ path: z.string().min(1), start_line: optionalLine, end_line: optionalLine }),
  modes: ["plan", "build"],
  async run(args, context) {
    const target = await resolveInWorkspace(context.root, args.path);
    const opened = await openRegularFile(target.absolute, target.relative);
    if (opened.kind === "missing")
      return toolError(`${target.relative} does not exist. Use list_files or search to find the right path.`);
    if (opened.kind === "directory")
      return toolError(`${target.relative} is a directory. Use list_files to see what it holds.`);
    if (opened.kind === "not-regular") return toolError(opened.message);
    const { handle, size } = opened;
    try {
      if (looksBinary(await readUpTo(handle, Math.min(size, 8000))))
        return toolError(`${target.relative} is a binary file (${size} bytes).`);
      context.filesRead.add(target.relative);

      const start = args.start_line ?? 1;
      const requestedEnd = args.end_line ?? start + READ_WINDOW_LINES - 1;
      if (requestedEnd < start) return toolError("end_line must not be smaller than start_line.");
      const window = await readWindow(
        handle,
        size,
        { start, end: Math.min(requestedEnd, start + READ_WINDOW_LINES - 1) },
        context,
      );
      const { total } = window;
      if (total !== null && start > Math.max(total, 1))
        return toolError(`${target.relative} has only ${total} lines; start_line ${start} is past the end.`);

      let text = "";
      let shownEnd = start - 1;
      for (const [index, line] of window.lines.entries()) {
        const n = start + index;
        const shown = line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)} … [line cut]` : line;
        const next = `${String(n).padStart(6)}\t${shown}\n`;
        if (text.length + next.length > MAX_RESULT_CHARS) break;
        text += next;
        shownEnd = n;
      }
      if (total === null) {
        const hint = `\n[Showing lines ${start}-${shownEnd} of a file too large to count its lines. Call read_file with start_line=${shownEnd + 1} to read on, or use search to find what you need.]`;
        return { content: `${target.relative} (${formatBytes(size)})\n${text}${hint}` };
      }
      const header = `${target.relative} (${total} lines)`;
      if (start === 1 && shownEnd === total) return { content: `${header}\n${text}` };
      const hint =
        shownEnd < total
          ? `\n[Showing lines ${start}-${shownEnd} of ${total}. Call read_file with start_line=${shownEnd + 1} to read on, or use search to find what you need.]`
          : `\n[Showing lines ${start}-${shownEnd} of ${total}.]`;
      return { content: `${header}\n${text}${hint}` };
    } finally {
      await handle.close();
    }
  },
});

/**
 * The lines `start`..`end` (each kept to what can be shown), read chunk by chunk; and the file's
 * length in lines when it was read to its end (null for a huge file, which is read only up to the window).
 * Stops when the run is cancelled or out of time, so a slow read never outlives it.
 */
async function readWindow(
  handle: FileHandle,
  size: number,
  range: { start: number; end: number },
  context: ToolContext,
): Promise<{ lines: string[]; total: number | null }> {
  const huge = size > COUNT_LINES_LIMIT_BYTES;
  const maxLineBytes = MAX_LINE_CHARS * 4 + 4;
  const lines: string[] = [];
  const buffer = Buffer.alloc(Math.max(1, Math.min(CHUNK_BYTES, size)));
  let lineNo = 1;
  let lineBytes = 0;
  let kept: Buffer[] = [];
  let keptBytes = 0;
  let position = 0;
  let windowStart: number | null = null;
  const inWindow = () => lineNo >= range.start && lineNo <= range.end;
  const endLine = () => {
    if (inWindow()) lines.push(Buffer.concat(kept).toString("utf8"));
    kept = [];
    keptBytes = 0;
    lineBytes = 0;
    lineNo++;
  };

  for (;;) {
    if (context.signal?.aborted || timeLeft(context.deadline) === 0)
      throw new Error("the run ended while the file was being read");
    if (huge && lineNo > range.end) return { lines, total: null };
    if (huge && windowStart !== null && position - windowStart > MAX_WINDOW_BYTES) {
      if (lineBytes > 0 && inWindow()) endLine();
      return { lines, total: null };
    }
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const chunk = buffer.subarray(0, bytesRead);
    for (let from = 0; ;) {
      const newline = chunk.indexOf(10, from);
      const piece = chunk.subarray(from, newline === -1 ? bytesRead : newline);
      if (inWindow()) {
        windowStart ??= position - bytesRead + from;
        if (keptBytes < maxLineBytes) {
          // Copied: the chunk buffer is reused for the next read.
          const part = Buffer.from(piece.subarray(0, maxLineBytes - keptBytes));
          kept.push(part);
          keptBytes += part.length;
        }
      }
      lineBytes += piece.length;
      if (newline === -1) break;
      endLine();
      from = newline + 1;
    }
  }
  // The last line has no newline at its end; an empty file reads as one empty line.
  if (lineBytes > 0) endLine();
  const total = Math.max(lineNo - 1, 1);
  if (lineNo === 1 && range.start === 1) lines.push("");
  return { lines, total };
}
