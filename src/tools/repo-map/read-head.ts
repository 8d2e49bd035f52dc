import { constants, promises as fs } from "node:fs";
import { PathError, resolveInWorkspace } from "../paths.js";
import { looksBinary } from "../git-read.js";

/** Only the head of a file is outlined; bigger files are usually generated or vendored. */
export const MAX_FILE_BYTES = 128 * 1024;
/** Never follow a symbolic link at open time, nor block on a FIFO swapped in for a file. */
const NO_FOLLOW_READ = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * The first MAX_FILE_BYTES of a workspace file, or why it is not read. Confined like read_file:
 * the path must resolve inside the workspace, and a symbolic link is never followed.
 */
export async function readHead(root: string, relative: string): Promise<{ text?: string; note?: string; large?: boolean }> {
  let absolute: string;
  try {
    absolute = (await resolveInWorkspace(root, relative)).absolute;
  } catch (error) {
    if (error instanceof PathError) return { note: "not read: it leads outside the repository" };
    throw error;
  }
  const stat = await fs.lstat(absolute).catch(() => null);
  if (!stat) return { note: "deleted in the working tree" };
  if (stat.isSymbolicLink()) return { note: "symbolic link" };
  if (!stat.isFile()) return {};
  const handle = await fs.open(absolute, NO_FOLLOW_READ).catch(() => null);
  if (!handle) return { note: "not readable" };
  try {
    const buffer = Buffer.alloc(Math.min(stat.size, MAX_FILE_BYTES));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const bytes = buffer.subarray(0, bytesRead);
    if (looksBinary(bytes)) return { note: "binary" };
    const text = bytes.toString("utf8");
    if (stat.size <= MAX_FILE_BYTES) return { text };
    // Drop the partial last line; the outline covers only the head of the file.
    return { text: text.slice(0, text.lastIndexOf("\n") + 1), large: true, note: `${formatSize(stat.size)}; outlined from the first ${MAX_FILE_BYTES / 1024} KB` };
  } finally {
    await handle.close();
  }
}

function formatSize(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MB` : `${Math.round(bytes / 1024)} KB`;
}
