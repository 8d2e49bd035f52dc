import { promises as fs } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { recordWorkdirBytes, sizeOnDisk } from "../shared/disk-usage.js";
import type { RepoCache } from "./repo-cache.js";
import { claimWorkdir, forget, isAlive, makerOf, recordedIds } from "./workdir-claim.js";

/** Whose a repository's files are: recorded in its mirror at each sync, so an uninstall finds them without GitHub. */
export interface RepositoryOwner {
  installationId: number;
  owner: string;
  name: string;
  cloneUrl: string;
}

/**
 * An uninstall (`repositories` null: every repository of the installation) or repositories removed from an
 * installation.
 */
export interface RepositoryRemoval {
  installationId: number;
  repositories: ReadonlyArray<{ owner: string; name: string }> | null;
}

/** A file of Blueprint's own inside each mirror (a bare repository: git ignores it). */
const OWNER_FILE = "blueprint-repository.json";
/**
 * `in-use/<mirror's name>/<process id>`: which processes run jobs on a mirror, for the others on the directory to leave
 * it be.
 */
const IN_USE = "in-use";
const ownerSchema = z.object({
  installationId: z.number().int(),
  owner: z.string(),
  name: z.string(),
  cloneUrl: z.string(),
});

interface Logger {
  info(object: object, message?: string): void;
  warn(object: object, message?: string): void;
}

/**
 * Keeps the work directory of the processes that run jobs on it: a repository's files (mirror,
 * repo_map cache, worktrees) are removed when its installation goes (`remove`), and the least recently
 * used repositories are evicted while the directory is over BLUEPRINT_WORKDIR_MAX_GB (`enforceLimit`,
 * at start and after each job). A repository a running job uses (`use`) is never touched: its removal
 * waits for the job's end, and eviction passes it by.
 *
 * Size: a `du`-like walk of each repository's files, remembered per repository and measured again
 * only after a job used it (nothing else writes there), so the check after a job walks one repository,
 * not the whole directory. A running job's growth counts from its end. Each total is recorded in the
 * work directory for /healthz to read (shared/disk-usage.ts). Recency: the mirror's modification time,
 * set at the end of each job, so the order survives restarts.
 */
export class WorkdirKeeper {
  /** Running jobs per mirror (this process's; other processes' are marked under in-use/). */
  private readonly using = new Map<string, number>();
  /** Whose each mirror in use is (recorded in the mirror when it is synced). */
  private readonly users = new Map<string, RepositoryOwner>();
  /** Mirrors to remove when their last running job ends. */
  private readonly doomed = new Set<string>();
  /** Removals under way: a job on that repository waits for it, then syncs a fresh mirror. */
  private readonly removing = new Map<string, Promise<void>>();
  /** Bytes per mirror, as last measured; a mirror not here is measured at the next check. */
  private readonly sizes = new Map<string, number>();
  /** The start's tidying, which a job waits for (it would remove the job's fresh worktree). */
  private started: Promise<unknown> = Promise.resolve();
  /** The other process that kept the directory at the last check, said once. */
  private standingDownFor: string | null = null;
  /** Housekeeping runs one at a time, so two checks never evict for the same excess. */
  private housekeeping: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly cache: RepoCache,
    private readonly options: { maxBytes?: number | null | undefined; log?: Logger | undefined } = {},
  ) {
    cache.onSynced = (mirror) => this.recordOwner(mirror);
  }

  get maxBytes(): number | null {
    return this.options.maxBytes ?? null;
  }

  /**
   * Before this process's first job: trees earlier processes left go, then the bound is checked; jobs
   * wait for it. Returns the mirrors evicted; a failure is logged, never thrown (the jobs run anyway).
   */
  start(): Promise<string[]> {
    const started = this.serially(async () => {
      if (await this.keepsDirectory()) {
        await this.cache.removeLeftoverWorktrees(true);
        await this.forgetGoneProcesses();
      }
      return this.evictOverLimit();
    }).catch((error: unknown) => {
      this.options.log?.warn({ err: error }, "could not tidy the work directory at start");
      return [];
    });
    this.started = started;
    return started;
  }

  /**
   * Runs a job's work on a repository: its files are not removed or evicted meanwhile. At its end the
   * repository is marked used, removed if an uninstall came meanwhile, and the bound is checked.
   */
  async use<T>(repository: RepositoryOwner, work: () => Promise<T>): Promise<T> {
    const mirror = this.cache.mirrorPath(repository.cloneUrl);
    this.using.set(mirror, (this.using.get(mirror) ?? 0) + 1);
    this.users.set(mirror, repository);
    try {
      await this.markInUse(mirror, true);
      await this.started;
      await this.removing.get(mirror);
      return await work();
    } finally {
      const left = (this.using.get(mirror) ?? 1) - 1;
      if (left === 0) {
        this.using.delete(mirror);
        this.users.delete(mirror);
        await this.markInUse(mirror, false).catch(() => undefined);
      } else this.using.set(mirror, left);
      await this.afterUse(mirror).catch((error: unknown) =>
        this.options.log?.warn({ err: error, mirror }, "could not tidy the work directory after a job"),
      );
    }
  }

  /**
   * Removes the repositories' files now, or, for one a running job uses, when its last job ends.
   * Needs nothing from GitHub: the owner each mirror records says which are the installation's. One
   * another live process on the directory uses is left to it (`left`): it hears the removal too.
   */
  remove(removal: RepositoryRemoval): Promise<{ removed: string[]; deferred: string[]; left: string[] }> {
    return this.serially(async () => {
      const removed: string[] = [];
      const deferred: string[] = [];
      const left: string[] = [];
      for (const mirror of new Set([...(await this.cache.mirrors()), ...this.users.keys()])) {
        if (!matches(this.users.get(mirror) ?? (await readOwner(mirror)), removal)) continue;
        if (this.using.has(mirror)) {
          this.doomed.add(mirror);
          deferred.push(mirror);
        } else if (await this.othersUse(mirror)) left.push(mirror);
        else if (await this.removeIdle(mirror)) removed.push(mirror);
      }
      if (removed.length > 0) await this.record();
      return { removed, deferred, left };
    });
  }

  /**
   * Evicts least recently used repositories no job uses until the directory is within the bound; returns the mirrors
   * evicted.
   */
  enforceLimit(): Promise<string[]> {
    return this.serially(() => this.evictOverLimit());
  }

  private async afterUse(mirror: string): Promise<void> {
    await this.serially(async () => {
      if (this.using.has(mirror)) return;
      if (this.doomed.delete(mirror)) {
        if (!(await this.othersUse(mirror)) && (await this.removeIdle(mirror)))
          this.options.log?.info(
            { mirror },
            "removed the files of a repository Blueprint no longer has access to, now that its last job ended",
          );
        await this.record();
        return;
      }
      if (await exists(mirror)) {
        const now = new Date();
        await fs.utimes(mirror, now, now);
      }
      this.sizes.delete(mirror);
      await this.evictOverLimit();
    });
  }

  private async evictOverLimit(): Promise<string[]> {
    const mirrors = await this.cache.mirrors();
    for (const known of this.sizes.keys()) if (!mirrors.includes(known)) this.sizes.delete(known);
    let total = 0;
    for (const mirror of mirrors) total += await this.sizeOf(mirror);
    const evicted: string[] = [];
    const limit = this.maxBytes;
    if (limit !== null && total > limit && (await this.keepsDirectory())) {
      for (const mirror of await leastRecentlyUsedFirst(mirrors)) {
        if (total <= limit) break;
        const size = this.sizes.get(mirror) ?? 0;
        // Asked again before each: another process may have taken the directory over meanwhile.
        if (this.using.has(mirror) || (await this.othersUse(mirror)) || !(await this.keepsDirectory())) continue;
        if (await this.removeIdle(mirror)) {
          total -= size;
          evicted.push(mirror);
        }
      }
      if (evicted.length > 0)
        this.options.log?.info(
          { evicted, bytes: total, limitBytes: limit },
          "evicted the least recently used repositories to keep the work directory within BLUEPRINT_WORKDIR_MAX_GB",
        );
      if (total > limit)
        this.options.log?.warn(
          { bytes: total, limitBytes: limit },
          "the work directory is over BLUEPRINT_WORKDIR_MAX_GB, and what is left running jobs use",
        );
    }
    await recordWorkdirBytes(this.cache.workdir, total);
    return evicted;
  }

  /**
   * Removes a mirror's repository unless a job uses it (checked with no pause before the removal starts): true when
   * removed.
   */
  private async removeIdle(mirror: string): Promise<boolean> {
    if (this.using.has(mirror)) return false;
    const removal = this.cache.removeRepository(mirror);
    this.removing.set(
      mirror,
      removal.catch(() => undefined),
    );
    try {
      await removal;
      this.sizes.delete(mirror);
      return true;
    } finally {
      this.removing.delete(mirror);
    }
  }

  /**
   * Whether this process keeps the directory, asked before each sweep and eviction: it claims it
   * (workdir-claim.ts) unless another live process has. A second process on one directory (two
   * workers given the same BLUEPRINT_WORKDIR) neither evicts nor sweeps while the keeper lives, and
   * says so, once per keeper; it takes over when the keeper is gone.
   */
  private async keepsDirectory(): Promise<boolean> {
    const holder = await claimWorkdir(this.cache.workdir, this.cache.identity);
    if (holder !== null && holder !== this.standingDownFor)
      this.options.log?.warn(
        { workdir: this.cache.workdir, keeper: holder },
        "another process keeps this work directory (give each worker its own BLUEPRINT_WORKDIR): this one neither evicts nor removes leftover worktrees there",
      );
    this.standingDownFor = holder;
    return holder === null;
  }

  /** Whether another live process runs a job on the mirror or keeps a worktree of it (pooled or running). */
  private async othersUse(mirror: string): Promise<boolean> {
    const { workdir, identity } = this.cache;
    const marks = path.join(workdir, IN_USE, path.basename(mirror));
    const users = await fs.readdir(marks).catch(() => [] as string[]);
    const trees = (await this.cache.repositoryFiles(mirror)).filter(
      (file) => path.dirname(file) === path.join(workdir, "jobs"),
    );
    const makers = trees.map((tree) => makerOf(path.basename(tree)));
    for (const id of new Set([...users, ...makers])) {
      if (id !== null && id !== identity.id && (await isAlive(workdir, id, identity))) return true;
    }
    return false;
  }

  private async markInUse(mirror: string, using: boolean): Promise<void> {
    const marks = path.join(this.cache.workdir, IN_USE, path.basename(mirror));
    if (!using) return fs.rm(path.join(marks, this.cache.identity.id), { force: true });
    await fs.mkdir(marks, { recursive: true, mode: 0o700 });
    await fs.writeFile(path.join(marks, this.cache.identity.id), "", { mode: 0o600 });
  }

  /** Forgets the processes that are gone (after the sweep took their worktrees), and their in-use marks. */
  private async forgetGoneProcesses(): Promise<void> {
    const { workdir, identity } = this.cache;
    const gone = new Set<string>();
    for (const id of await recordedIds(workdir)) if (!(await isAlive(workdir, id, identity))) gone.add(id);
    for (const mirror of await fs.readdir(path.join(workdir, IN_USE)).catch(() => [] as string[])) {
      for (const id of await fs.readdir(path.join(workdir, IN_USE, mirror)).catch(() => [] as string[])) {
        if (gone.has(id) || !(await isAlive(workdir, id, identity)))
          await fs.rm(path.join(workdir, IN_USE, mirror, id), { force: true });
      }
    }
    for (const id of gone) await forget(workdir, id);
  }

  /**
   * The owner record, written when a job's sync makes or fetches the mirror: an uninstall then finds a mirror whose job
   * never ended.
   */
  private async recordOwner(mirror: string): Promise<void> {
    const repository = this.users.get(mirror);
    if (repository) await fs.writeFile(path.join(mirror, OWNER_FILE), JSON.stringify(ownerSchema.parse(repository)));
  }

  private async record(): Promise<void> {
    let total = 0;
    for (const mirror of await this.cache.mirrors()) total += await this.sizeOf(mirror);
    await recordWorkdirBytes(this.cache.workdir, total);
  }

  private async sizeOf(mirror: string): Promise<number> {
    const known = this.sizes.get(mirror);
    if (known !== undefined) return known;
    let bytes = 0;
    for (const file of await this.cache.repositoryFiles(mirror)) bytes += await sizeOnDisk(file);
    this.sizes.set(mirror, bytes);
    return bytes;
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.housekeeping.then(work, work);
    this.housekeeping = next.catch(() => undefined);
    return next;
  }
}

async function readOwner(mirror: string): Promise<z.output<typeof ownerSchema> | null> {
  const text = await fs.readFile(path.join(mirror, OWNER_FILE), "utf8").catch(() => null);
  if (text === null) return null;
  try {
    const parsed = ownerSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** GitHub's owner and repository names are case-insensitive. */
function matches(owner: RepositoryOwner | null, removal: RepositoryRemoval): boolean {
  if (!owner || owner.installationId !== removal.installationId) return false;
  const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
  return (
    removal.repositories === null ||
    removal.repositories.some((repository) => same(repository.owner, owner.owner) && same(repository.name, owner.name))
  );
}

async function leastRecentlyUsedFirst(mirrors: string[]): Promise<string[]> {
  const used = await Promise.all(
    mirrors.map(async (mirror) => ({ mirror, at: (await fs.stat(mirror).catch(() => null))?.mtimeMs ?? 0 })),
  );
  return used.sort((a, b) => a.at - b.at).map((entry) => entry.mirror);
}

const exists = (file: string) =>
  fs.stat(file).then(
    () => true,
    () => false,
  );
