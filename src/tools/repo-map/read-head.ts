import { closeSync, constants, fstatSync, openSync, readSync, realpathSync } from "node:fs";
import path from "node:path";
import { looksBinary } from "../looks-binary.js";

/** Only the head of a file is outlined; bigger files are usually generated or vendored. */
export const MAX_FILE_BYTES = 64 * 1024;
/** Never follow a symbolic link at open time, nor block on a FIFO swapped in for a file. */
const NO_FOLLOW_READ = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * The one note about a file's content rather than the worktree's state: the rest (gone, a link, unreadable, outside) is
 * the worktree's.
 */
export const BINARY_NOTE = "binary";

/** How much of a big file's end is read besides its head: where compilers write their source-map comment. */
export const TAIL_BYTES = 512;

export interface FileHead {
  text?: string;
  note?: string;
  large?: boolean;
  /** A big file's last TAIL_BYTES (its head alone does not show how it ends). */
  tail?: string;
}

/**
 * Reads the heads of tracked files, confined like read_file: a file must resolve inside the
 * workspace (its folder's real path is checked, once per folder) and a symbolic link is never
 * followed. Synchronous: it runs on a parser worker, where nothing else waits, and a map reads
 * thousands of files (an asynchronous read per file cost more than its parse). Make one per map:
 * the folders' real paths are remembered for its lifetime.
 */
export class HeadReader {
  private realRoot: string | undefined;
  /** Per folder: why files in it are not read, or "" when they are. */
  private readonly folders = new Map<string, string>();

  constructor(private readonly root: string) {}

  /** The first MAX_FILE_BYTES of a tracked file, or why it is not read. */
  read(relative: string): FileHead {
    const problem = this.folderProblem(relative);
    if (problem) return { note: problem };
    let fd: number;
    try {
      fd = openSync(path.join(this.root, relative), NO_FOLLOW_READ);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR") return { note: "deleted in the working tree" };
      // O_NOFOLLOW refuses a symbolic link with ELOOP (EMLINK on some BSDs).
      if (code === "ELOOP" || code === "EMLINK") return { note: "symbolic link" };
      return { note: "not readable" };
    }
    try {
      const stat = fstatSync(fd);
      if (!stat.isFile()) return {};
      const buffer = Buffer.allocUnsafe(Math.min(stat.size, MAX_FILE_BYTES));
      const bytes = buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0));
      if (looksBinary(bytes)) return { note: BINARY_NOTE };
      const text = bytes.toString("utf8");
      if (stat.size <= MAX_FILE_BYTES) return { text };
      const tail = Buffer.allocUnsafe(TAIL_BYTES);
      const tailText = tail.subarray(0, readSync(fd, tail, 0, TAIL_BYTES, stat.size - TAIL_BYTES)).toString("utf8");
      // Drop the partial last line; the outline covers only the head of the file.
      return {
        text: text.slice(0, text.lastIndexOf("\n") + 1),
        tail: tailText,
        large: true,
        note: `${formatSize(stat.size)}; outlined from the first ${MAX_FILE_BYTES / 1024} KB`,
      };
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Why files in this path's folder must not be read: it leaves the workspace, or leads into .git/, through a symbolic
   * link.
   */
  private folderProblem(relative: string): string | undefined {
    if (path.isAbsolute(relative) || relative.split("/").some((part) => part === ".." || part === ".git"))
      return "not read: it leads outside the repository";
    const slash = relative.lastIndexOf("/");
    const folder = slash < 0 ? "" : relative.slice(0, slash);
    let problem = this.folders.get(folder);
    if (problem === undefined) {
      problem = this.checkFolder(folder);
      this.folders.set(folder, problem);
    }
    return problem || undefined;
  }

  private checkFolder(folder: string): string {
    let real: string;
    try {
      this.realRoot ??= realpathSync.native(this.root);
      real = realpathSync.native(path.join(this.root, folder));
    } catch {
      return "deleted in the working tree";
    }
    const root = this.realRoot;
    if (real !== root && !real.startsWith(root + path.sep)) return "not read: it leads outside the repository";
    const inside = path.relative(root, real).split(path.sep);
    return inside[0] === ".git" ? "not read: it leads outside the repository" : "";
  }
}

function formatSize(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MB` : `${Math.round(bytes / 1024)} KB`;
}
