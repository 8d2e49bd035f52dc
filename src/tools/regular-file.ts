import { constants, promises as fs, type Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";

/**
 * The file tools run in the App's own process: a FIFO, socket or device in the workspace (any
 * command can make one) would block a libuv thread on open or read, and a huge file would fill
 * the App's memory. So they only ever open regular files, and never block when opening.
 */

/** O_NONBLOCK: a FIFO swapped in after the type check still cannot hold the open. */
const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);
/** For writes, O_NONBLOCK makes opening a FIFO without a reader fail (ENXIO) instead of waiting. */
export const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_NONBLOCK ?? 0);

export type OpenedFile =
  | { kind: "file"; handle: FileHandle; size: number }
  | { kind: "missing" }
  | { kind: "directory" }
  /** `message`: "<path> is not a regular file (a named pipe)", for a tool error. */
  | { kind: "not-regular"; message: string };

/** Opens a file of the workspace (already confined by resolveInWorkspace) for reading, if it is a regular file. */
export async function openRegularFile(absolute: string, relative: string): Promise<OpenedFile> {
  const stat = await fs.stat(absolute).catch(() => null);
  if (!stat) return { kind: "missing" };
  if (stat.isDirectory()) return { kind: "directory" };
  if (!stat.isFile()) return { kind: "not-regular", message: notRegularFile(relative, stat) };
  const handle = await fs.open(absolute, READ_FLAGS);
  const opened = await handle.stat().catch(async (error: unknown) => {
    await handle.close();
    throw error;
  });
  if (!opened.isFile()) {
    await handle.close();
    return { kind: "not-regular", message: notRegularFile(relative, opened) };
  }
  return { kind: "file", handle, size: opened.size };
}

/** Why a path that exists is not a regular file, or null when it is one (or does not exist). */
export async function notRegularFileProblem(absolute: string, relative: string): Promise<string | null> {
  const stat = await fs.stat(absolute).catch(() => null);
  return stat && !stat.isFile() && !stat.isDirectory() ? notRegularFile(relative, stat) : null;
}

/** Reads at most `size` bytes from the start: a file that grows meanwhile cannot make it read more. */
export async function readUpTo(handle: FileHandle, size: number): Promise<Buffer> {
  const buffer = Buffer.alloc(size);
  let filled = 0;
  while (filled < size) {
    const { bytesRead } = await handle.read(buffer, filled, size - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

/** "1.2 MB", "800 bytes". */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  if (bytes < 1024 * 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  return `${(bytes / (1024 * 1024 * 1024)).toFixed(1)} GB`;
}

function notRegularFile(relative: string, stat: Stats): string {
  const what = stat.isFIFO()
    ? "a named pipe"
    : stat.isSocket()
      ? "a socket"
      : stat.isCharacterDevice() || stat.isBlockDevice()
        ? "a device"
        : "not a file";
  return `${relative} is not a regular file (${what}); the file tools only read and change regular files`;
}
