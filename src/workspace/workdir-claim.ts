import { randomBytes } from "node:crypto";
import { readFileSync, readlinkSync, promises as fs } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { isProcessAlive } from "../shared/process-alive.js";

/**
 * Who made a file in the work directory: a process, told apart from a later one given the same pid
 * (pids are reused, in containers from 1 up after every restart) by its start time, the boot and the
 * pid namespace it runs in, and by a random token. `id` names it in file names.
 */
export interface ProcessIdentity {
  id: string;
  pid: number;
  /** Start time in clock ticks since boot (/proc/<pid>/stat); null where /proc cannot say. */
  start: string | null;
  boot: string | null;
  pidNamespace: string | null;
}

const identitySchema = z.object({
  id: z.string().regex(/^p\d+-[0-9a-f]+$/),
  pid: z.number().int().positive(),
  start: z.string().nullable(),
  boot: z.string().nullable(),
  pidNamespace: z.string().nullable(),
});

/**
 * How often a process marks its record alive, and how long an unmarked record of a process this one cannot see stays
 * alive.
 */
const HEARTBEAT_MS = 30_000;
export const LEASE_MS = 4 * HEARTBEAT_MS;

let current: ProcessIdentity | null = null;

/** This process's identity (one per process; tests make others with `newIdentity`). */
export function currentIdentity(): ProcessIdentity {
  current ??= newIdentity(process.pid);
  return current;
}

export function newIdentity(pid: number, start: string | null = startOf(pid)): ProcessIdentity {
  return {
    id: `p${pid}-${randomBytes(6).toString("hex")}`,
    pid,
    start,
    boot: readOr("/proc/sys/kernel/random/boot_id"),
    pidNamespace: namespaceOf("self"),
  };
}

function startOf(pid: number): string | null {
  const stat = readOr(`/proc/${pid}/stat`);
  // The command name (field 2) may hold spaces and parentheses: count from its closing one; start time is field 22.
  return stat === null ? null : (stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null);
}

function readOr(file: string): string | null {
  try {
    return readFileSync(file, "utf8").trim();
  } catch {
    return null;
  }
}

function namespaceOf(pid: string): string | null {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return null;
  }
}

const recordsOf = (workdir: string) => path.join(workdir, "processes");
const recordOf = (workdir: string, id: string) => path.join(recordsOf(workdir), `${id}.json`);
const registered = new Map<string, Promise<void>>();

/**
 * Records the identity in the work directory (`processes/<id>.json`) before it makes anything there,
 * and marks it alive every HEARTBEAT_MS: another process that cannot see this one (another pid
 * namespace, another machine) counts it alive while the mark is fresh.
 */
export function register(workdir: string, identity: ProcessIdentity): Promise<void> {
  const file = recordOf(workdir, identity.id);
  let done = registered.get(file);
  if (!done) {
    const write = async (first: boolean) => {
      // Later writes never make the work directory itself again (deleted, it is gone for good).
      await fs.mkdir(recordsOf(workdir), { recursive: first, mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "EEXIST") throw error;
      });
      await fs.writeFile(file, JSON.stringify(identity), { mode: 0o600 });
    };
    done = write(true).then(() => {
      // Written whole each time, not touched: a record removed meanwhile comes back, or this process's trees would look
      // orphaned.
      setInterval(() => void write(false).catch(() => undefined), HEARTBEAT_MS).unref();
    });
    done.catch(() => registered.delete(file));
    registered.set(file, done);
  }
  return done;
}

/**
 * Whether the process `id` names may still be at work: false only when it is provably gone — no
 * record; or a record this process can check (same boot, same pid namespace) whose pid is dead or now
 * another process's (another start time); or, for one it cannot check, a mark older than LEASE_MS.
 */
export async function isAlive(workdir: string, id: string, self: ProcessIdentity): Promise<boolean> {
  if (id === self.id) return true;
  const file = recordOf(workdir, id);
  const [text, stat] = await Promise.all([
    fs.readFile(file, "utf8").catch(() => null),
    fs.stat(file).catch(() => null),
  ]);
  if (text === null || stat === null) return false;
  const record = parseIdentity(text);
  if (!record) return false;
  if (
    record.boot !== null &&
    record.boot === self.boot &&
    record.pidNamespace !== null &&
    record.pidNamespace === self.pidNamespace
  ) {
    return isProcessAlive(record.pid) && (record.start === null || record.start === startOf(record.pid));
  }
  return Date.now() - stat.mtimeMs < LEASE_MS;
}

/** Forgets a gone process's record (once nothing of its is left). */
export async function forget(workdir: string, id: string): Promise<void> {
  await fs.rm(recordOf(workdir, id), { force: true });
}

/** Every process recorded in the work directory. */
export async function recordedIds(workdir: string): Promise<string[]> {
  const names = await fs.readdir(recordsOf(workdir)).catch(() => [] as string[]);
  return names.filter((name) => name.endsWith(".json")).map((name) => name.slice(0, -".json".length));
}

function parseIdentity(text: string): ProcessIdentity | null {
  try {
    const parsed = identitySchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** The maker's id in a name made by `madeBy` (`<id>_<rest>`), or null for a name without one (an earlier version's). */
export function makerOf(name: string): string | null {
  const id = name.split("_")[0] ?? "";
  return name.includes("_") && /^p\d+-[0-9a-f]+$/.test(id) ? id : null;
}

export function madeBy(identity: ProcessIdentity, rest: string): string {
  return `${identity.id}_${rest}`;
}

const CLAIM_FILE = "keeper.json";
const claimSchema = z.object({ id: z.string() });

/**
 * Claims the work directory for `self`: returns null when `self` holds it (now or already), or the id
 * of the live process that does. The claim is made with link(2), which fails when the file exists, so
 * two processes never both make it; a dead holder's claim is moved aside (rename(2): one mover wins),
 * and one that turns out to be a fresh claim, made meanwhile, is put back.
 */
export async function claimWorkdir(workdir: string, self: ProcessIdentity): Promise<string | null> {
  const file = path.join(workdir, CLAIM_FILE);
  await register(workdir, self);
  for (let attempt = 0; attempt < 5; attempt++) {
    const holder = await claimHolder(file);
    if (holder === self.id) return null;
    if (holder === undefined) {
      if (await linkClaim(file, self)) return null;
      continue;
    }
    if (holder !== null && (await isAlive(workdir, holder, self))) return holder;
    const aside = `${file}.${self.id}`;
    if (
      !(await fs.rename(file, aside).then(
        () => true,
        () => false,
      ))
    )
      continue;
    if ((await claimHolder(aside)) !== holder) await fs.link(aside, file).catch(() => undefined);
    await fs.rm(aside, { force: true });
  }
  // Others keep changing it: stand down this time, and ask again at the next check.
  return (await claimHolder(file)) ?? "unknown";
}

/** The holder's id; null for an unreadable claim (a dead holder's, cut short); undefined for none. */
async function claimHolder(file: string): Promise<string | null | undefined> {
  const text = await fs
    .readFile(file, "utf8")
    .catch((error: NodeJS.ErrnoException) => (error.code === "ENOENT" ? undefined : ""));
  if (text === undefined) return undefined;
  try {
    const parsed = claimSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data.id : null;
  } catch {
    return null;
  }
}

async function linkClaim(file: string, self: ProcessIdentity): Promise<boolean> {
  // Written whole beside it first, so the claim never exists half written.
  const draft = `${file}.${self.id}.draft`;
  await fs.writeFile(draft, JSON.stringify({ id: self.id }), { mode: 0o600 });
  try {
    await fs.link(draft, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    await fs.rm(draft, { force: true });
  }
}
