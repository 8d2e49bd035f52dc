import { promises as fs } from "node:fs";
import path from "node:path";
import { z } from "zod";

/**
 * What /healthz says about the work directory. `workdirBytes` is what the process that runs jobs
 * last measured (null before it has measured once, or where no job runs); the other two are read now.
 */
export interface DiskUse {
  workdirBytes: number | null;
  /** BLUEPRINT_WORKDIR_MAX_GB in bytes; null without a bound. */
  limitBytes: number | null;
  /** Free space of the work directory's file system for this process's user; null when it cannot be read. */
  freeBytes: number | null;
  /** When `workdirBytes` was measured (ISO time); null with it. */
  measuredAt: string | null;
}

/**
 * Where the process that runs jobs leaves its last measurement of the work directory: /healthz in
 * the intake or a queue worker reads it there instead of walking a tree of millions of files itself.
 */
const MEASUREMENT_FILE = "disk-use.json";
const measurementSchema = z.object({ bytes: z.number().nonnegative(), measuredAt: z.string() });

/**
 * Bytes a file or tree takes on disk, like `du -s`: allocated blocks, symbolic links never followed, a hard-linked file
 * counted once.
 */
export async function sizeOnDisk(root: string): Promise<number> {
  const seen = new Set<string>();
  let total = 0;
  const directories = [root];
  const add = (stat: import("node:fs").Stats) => {
    if (stat.nlink > 1 && !stat.isDirectory()) {
      const key = `${stat.dev}:${stat.ino}`;
      if (seen.has(key)) return;
      seen.add(key);
    }
    total += stat.blocks * 512;
  };
  const rootStat = await fs.lstat(root).catch(() => null);
  if (!rootStat) return 0;
  add(rootStat);
  if (!rootStat.isDirectory()) return total;
  // One directory at a time, its entries looked at 64 at once: a bounded number of open handles.
  for (let dir = directories.pop(); dir !== undefined; dir = directories.pop()) {
    const names = await fs.readdir(dir).catch(() => [] as string[]);
    for (let start = 0; start < names.length; start += 64) {
      const stats = await Promise.all(
        names.slice(start, start + 64).map(async (name) => ({
          file: path.join(dir, name),
          stat: await fs.lstat(path.join(dir, name)).catch(() => null),
        })),
      );
      for (const { file, stat } of stats) {
        if (!stat) continue; // removed while we looked
        add(stat);
        if (stat.isDirectory()) directories.push(file);
      }
    }
  }
  return total;
}

/** Free bytes on the file system that holds `dir` (for an unprivileged user), or null. */
export async function freeBytesAt(dir: string): Promise<number | null> {
  try {
    const stats = await fs.statfs(dir);
    return stats.bavail * stats.bsize;
  } catch {
    return null;
  }
}

/**
 * Records a measurement of the work directory for /healthz (written whole, then renamed, so a reader never sees half).
 */
export async function recordWorkdirBytes(workdir: string, bytes: number, now = new Date()): Promise<void> {
  const file = path.join(workdir, MEASUREMENT_FILE);
  const partial = `${file}.${process.pid}.tmp`;
  // Before the first job the directory may not exist yet (made as the work directory is: the App user's alone).
  await fs.mkdir(workdir, { recursive: true, mode: 0o700 });
  await fs.writeFile(partial, JSON.stringify({ bytes, measuredAt: now.toISOString() }), { mode: 0o600 });
  await fs.rename(partial, file);
}

/**
 * The work directory's disk use as /healthz reports it: the last measurement recorded there, the bound, the free space
 * now.
 */
export async function readDiskUse(workdir: string, limitBytes: number | null): Promise<DiskUse> {
  const recorded = await fs
    .readFile(path.join(workdir, MEASUREMENT_FILE), "utf8")
    .then((text) => JSON.parse(text) as unknown)
    .catch(() => null);
  const parsed = measurementSchema.safeParse(recorded);
  const measurement = parsed.success ? parsed.data : null;
  return {
    workdirBytes: measurement?.bytes ?? null,
    limitBytes,
    freeBytes: await freeBytesAt(workdir),
    measuredAt: measurement?.measuredAt ?? null,
  };
}
