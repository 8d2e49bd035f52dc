import { createHash, randomUUID } from "node:crypto";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describeGitError, WorkspaceError } from "./git.js";
import { findNestedGit } from "./nested-git.js";
import {
  excludeFileOf,
  forgetWorktree,
  NO_DRIVERS_ATTRIBUTES,
  recordWorktree,
  restoreGitPointer,
  untrustedGit,
} from "./untrusted-git.js";
import { Mirror } from "./mirror.js";
import { Slots } from "../shared/slots.js";
import { currentIdentity, isAlive, madeBy, makerOf, register, type ProcessIdentity } from "./workdir-claim.js";
import { liveToken, tagCacheDirOf, Workspace, type GitToken } from "./workspace.js";

export interface WorkspaceRequest {
  /** From the webhook payload (`repository.clone_url`), never hard-coded. */
  cloneUrl: string;
  /** The ref to check out, e.g. `refs/heads/main` or `refs/pull/7/head`. */
  ref: string;
  /** A commit to check out instead of the ref's tip (it must be reachable from the ref). */
  sha?: string | undefined;
  /** For the fetch, and for the lazy blob fetches of the mirror and worktree it gives (read again at each). */
  token?: GitToken;
}

export function defaultWorkdir(): string {
  return path.join(os.tmpdir(), "blueprint");
}

/**
 * Per-repository cached mirrors: the first job clones blobless, later jobs only fetch.
 * Each job gets its own detached worktree, so jobs on one repository do not share a working tree.
 *
 * Worktrees are pooled per mirror: when a job is done its worktree is reset (`reset --hard`,
 * `clean -ffdx`: tracked files restored, everything untracked or ignored removed) and kept, unless
 * something named `.git` lies below its top: then no git runs over it at all (git would read that
 * nested repository's config, and reset, clean and `status --ignored` pass over it anyway) and it
 * is removed with the file system alone. The next job on the same repository checks out its
 * commit there, which rewrites only the files that differ, and uses it only when
 * `git status --ignored` then shows nothing at all. Anything odd removes the worktree instead,
 * and a job never shares a worktree with a running job.
 */
/** A worktree and the admin directory inside its mirror that Blueprint recorded when it made it. */
interface Worktree {
  dir: string;
  gitDir: string;
}

export class RepoCache {
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly idle = new Map<string, Worktree[]>();
  private readonly poolSize: number;
  private readonly fetches: Slots;
  /** The process making the worktrees (their names start with its id), so a sweep tells whose each is. */
  readonly identity: ProcessIdentity;
  /** Called with each mirror once it is synced, in its lock (the keeper records its owner there). */
  onSynced: ((mirror: string) => Promise<void>) | null = null;

  constructor(
    readonly workdir: string = defaultWorkdir(),
    options: {
      /** Clean worktrees kept per repository for later jobs (0 turns pooling off); default 2. */
      poolSize?: number;
      /** Clones and fetches running at once across all repositories; default 4. */
      maxFetches?: number;
      /** Tests stand in for another process; default this process's. */
      identity?: ProcessIdentity;
    } = {},
  ) {
    this.poolSize = options.poolSize ?? 2;
    this.fetches = new Slots(options.maxFetches ?? 4);
    this.identity = options.identity ?? currentIdentity();
  }

  private secured: Promise<void> | null = null;

  /**
   * The work directory and its jobs/ and mirrors/ are the App user's alone (0700, also when they
   * existed before): a file an agent left in its worktree (a set-user-id copy of a shell, say) is
   * then out of reach of every other local account, and so is every tenant's source.
   */
  private secureWorkdir(): Promise<void> {
    this.secured ??= (async () => {
      for (const dir of [this.workdir, path.join(this.workdir, "jobs"), path.join(this.workdir, "mirrors")]) {
        await fs.mkdir(dir, { recursive: true, mode: 0o700 });
        await fs.chmod(dir, 0o700);
      }
      await register(this.workdir, this.identity);
    })().catch((error: unknown) => {
      this.secured = null;
      throw error;
    });
    return this.secured;
  }

  /** Fetches the repository into its mirror (cloning it the first time). */
  async sync(request: Omit<WorkspaceRequest, "sha">): Promise<Mirror> {
    await this.secureWorkdir();
    const mirror = this.mirrorPath(request.cloneUrl);
    // A burst of jobs (many repositories at once) must not starve the process of CPU and I/O.
    await this.withLock(mirror, async () => {
      await this.fetches.run(() => this.syncMirror(mirror, request));
      await this.onSynced?.(mirror);
    });
    return new Mirror(this, mirror, request.cloneUrl, request.token);
  }

  /** A fresh worktree at a ref (or a commit reachable from it). */
  async prepare(request: WorkspaceRequest): Promise<Workspace> {
    const mirror = await this.sync(request);
    const sha = await mirror.resolve(request.sha ?? request.ref);
    if (!sha)
      throw new WorkspaceError(`the repository has no ${request.sha ? `commit ${request.sha}` : `ref ${request.ref}`}`);
    return mirror.checkout(sha);
  }

  /** @internal used by Mirror */
  async addWorktree(mirror: string, cloneUrl: string, sha: string, token: GitToken): Promise<Workspace> {
    const tree =
      (await this.reuse(mirror, cloneUrl, sha, token)) ?? (await this.freshWorktree(mirror, cloneUrl, sha, token));
    return new Workspace(tree.dir, sha, cloneUrl, { gitDir: tree.gitDir, mirror, token }, () =>
      this.release(mirror, tree),
    );
  }

  private async freshWorktree(mirror: string, cloneUrl: string, sha: string, token: GitToken): Promise<Worktree> {
    await this.secureWorkdir();
    const dir = path.join(this.workdir, "jobs", madeBy(this.identity, randomUUID()));
    const auth = { token: await liveToken(token), url: cloneUrl };
    await this.withLock(mirror, () =>
      untrustedGit({ gitDir: mirror }, { auth }).raw(["worktree", "add", "--detach", dir, sha]),
    );
    // Read once, now, before anything else has run in the tree; from here on this record counts.
    const gitDir = /^gitdir: (.+)$/m.exec(await fs.readFile(path.join(dir, ".git"), "utf8"))?.[1]?.trim() ?? "";
    if (path.dirname(gitDir) !== path.join(mirror, "worktrees")) {
      await this.remove(mirror, { dir, gitDir: "" });
      throw new WorkspaceError(`git made the worktree with an unexpected git directory (${gitDir || "none"})`);
    }
    recordWorktree(dir, gitDir);
    return { dir, gitDir };
  }

  /**
   * An idle worktree of this mirror moved to `sha`, or null when there is none. It is used only
   * when `git status --ignored` then shows nothing at all; otherwise it is removed.
   */
  private async reuse(mirror: string, cloneUrl: string, sha: string, token: GitToken): Promise<Worktree | null> {
    const tree = this.idle.get(mirror)?.pop();
    if (!tree) return null;
    try {
      // release() already reset and cleaned it; the status check proves nothing is left. Nothing
      // should have written there since, but if anything did, git must not meet a nested repository.
      if (!(await findNestedGit(tree.dir))) {
        const location = { gitDir: tree.gitDir, workTree: tree.dir };
        await untrustedGit(location, { auth: { token: await liveToken(token), url: cloneUrl } }).raw([
          "checkout",
          "--quiet",
          "--force",
          "--detach",
          sha,
        ]);
        const left = await untrustedGit(location).raw([
          "status",
          "--porcelain",
          "--ignored",
          "--untracked-files=all",
          "--ignore-submodules=all",
        ]);
        if (left.trim() === "") return tree;
      }
    } catch {
      // Not reusable: removed below.
    }
    await this.remove(mirror, tree);
    return null;
  }

  /** A finished job's worktree: reset (its leftovers deleted now, not later) and pooled, or removed. */
  private async release(mirror: string, tree: Worktree): Promise<void> {
    const pool = this.idle.get(mirror) ?? [];
    if (pool.length < this.poolSize) {
      try {
        // Before any git: git would read a nested repository's config, and reset, clean and
        // `status --ignored` pass over it, so what is in it would reach the next job. Such a tree is removed.
        if (!(await findNestedGit(tree.dir))) {
          // The next job's commands find the repository through this pointer: it must be Blueprint's.
          await restoreGitPointer(tree.dir, tree.gitDir);
          const git = untrustedGit({ gitDir: tree.gitDir, workTree: tree.dir });
          await git.raw(["reset", "--quiet", "--hard"]);
          await git.raw(["clean", "-ffdxq"]);
          // The next job's setup output is its own to list.
          await fs.rm(excludeFileOf(tree.gitDir), { force: true });
          if (pool.length < this.poolSize) {
            pool.push(tree);
            this.idle.set(mirror, pool);
            return;
          }
        }
      } catch {
        // Not reusable: removed below.
      }
    }
    await this.remove(mirror, tree);
  }

  mirrorPath(cloneUrl: string): string {
    const id = createHash("sha256").update(cloneUrl).digest("hex").slice(0, 16);
    const name =
      path
        .basename(cloneUrl)
        .replace(/\.git$/, "")
        .replace(/[^A-Za-z0-9._-]/g, "_") || "repo";
    return path.join(this.workdir, "mirrors", `${name}-${id}.git`);
  }

  /** Every mirror in the work directory (one per repository), whatever process made it. */
  async mirrors(): Promise<string[]> {
    const names = await fs.readdir(path.join(this.workdir, "mirrors")).catch(() => [] as string[]);
    return names.filter((name) => name.endsWith(".git")).map((name) => path.join(this.workdir, "mirrors", name));
  }

  /**
   * A repository's files, and what they take on disk: its mirror, its repo_map cache, and the worktrees
   * git recorded in the mirror (pooled or left by an earlier process) — only those under jobs/.
   */
  async repositoryFiles(mirror: string): Promise<string[]> {
    const jobs = path.join(this.workdir, "jobs");
    const records = await fs.readdir(path.join(mirror, "worktrees")).catch(() => [] as string[]);
    const worktrees = await Promise.all(
      records.map(async (name) => {
        // `<mirror>/worktrees/<name>/gitdir` names the worktree's `.git` file; out of the agent's reach.
        const pointer = (
          await fs.readFile(path.join(mirror, "worktrees", name, "gitdir"), "utf8").catch(() => "")
        ).trim();
        const dir = path.dirname(pointer);
        return pointer && path.dirname(dir) === jobs ? [dir] : [];
      }),
    );
    return [mirror, tagCacheDirOf(mirror), ...worktrees.flat()];
  }

  /**
   * Removes a repository's files (repositoryFiles) and forgets its pooled worktrees. The caller makes
   * sure no job uses it: a job that starts after this syncs a fresh mirror.
   */
  async removeRepository(mirror: string): Promise<void> {
    const pooled = this.idle.get(mirror) ?? [];
    this.idle.delete(mirror);
    await this.withLock(mirror, async () => {
      for (const tree of pooled) forgetWorktree(tree.dir);
      const files = await this.repositoryFiles(mirror);
      // Worktrees first, the mirror last: a removal cut short leaves a mirror that still lists what is left.
      for (const file of files.reverse()) await fs.rm(file, { recursive: true, force: true });
    });
  }

  /**
   * Worktrees a gone process left under jobs/ (its pool lived in its memory, and a crash leaves a
   * running job's tree): removed, and each mirror's record of them pruned. A tree whose maker may
   * still run (another process on this directory) stays; so does every tree of this process's. One
   * an earlier version made (its name says no maker) goes only with `earlierVersions`.
   */
  async removeLeftoverWorktrees(earlierVersions: boolean): Promise<void> {
    const jobs = path.join(this.workdir, "jobs");
    for (const name of await fs.readdir(jobs).catch(() => [] as string[])) {
      const maker = makerOf(name);
      const gone = maker === null ? earlierVersions : !(await isAlive(this.workdir, maker, this.identity));
      if (gone) await fs.rm(path.join(jobs, name), { recursive: true, force: true });
    }
    for (const mirror of await this.mirrors()) {
      await this.withLock(mirror, () =>
        untrustedGit({ gitDir: mirror })
          .raw(["worktree", "prune"])
          .catch(() => undefined),
      );
    }
  }

  private async syncMirror(mirror: string, request: WorkspaceRequest): Promise<void> {
    const refspecs = ["+refs/heads/*:refs/heads/*"];
    if (!request.ref.startsWith("refs/heads/")) refspecs.push(`+${request.ref}:${request.ref}`);
    const exists = await fs.stat(path.join(mirror, "HEAD")).then(
      () => true,
      () => false,
    );
    const auth = { token: await liveToken(request.token), url: request.cloneUrl };
    try {
      if (!exists) {
        await fs.mkdir(path.dirname(mirror), { recursive: true });
        await untrustedGit({ discoverFrom: path.dirname(mirror) }, { auth }).raw([
          "clone",
          "--bare",
          "--filter=blob:none",
          "--quiet",
          request.cloneUrl,
          mirror,
        ]);
        if (refspecs.length > 1)
          await untrustedGit({ gitDir: mirror }, { auth }).raw(["fetch", "--quiet", "origin", ...refspecs.slice(1)]);
      } else {
        await untrustedGit({ gitDir: mirror }, { auth }).raw(["fetch", "--quiet", "--prune", "origin", ...refspecs]);
      }
    } catch (error) {
      throw new WorkspaceError(`could not fetch the repository: ${describeGitError(error)}`);
    }
    // On every sync, so mirrors made before this rule get it too.
    await fs.mkdir(path.join(mirror, "info"), { recursive: true });
    await fs.writeFile(path.join(mirror, "info", "attributes"), NO_DRIVERS_ATTRIBUTES);
    // Shared by every worktree, so Blueprint keeps it empty (earlier versions listed setup output here).
    await fs.writeFile(path.join(mirror, "info", "exclude"), "");
  }

  /**
   * Deletes the tree with the file system, then lets the mirror's git forget it (`worktree remove`
   * would run `status` inside the tree first, and with it a nested repository's config).
   */
  private async remove(mirror: string, tree: Worktree): Promise<void> {
    forgetWorktree(tree.dir);
    await this.withLock(mirror, async () => {
      await fs.rm(tree.dir, { recursive: true, force: true });
      await untrustedGit({ gitDir: mirror })
        .raw(["worktree", "prune"])
        .catch(() => undefined);
    });
  }

  private async withLock<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(key) ?? Promise.resolve();
    const next = previous.then(work, work);
    const settled = next.catch(() => undefined);
    this.locks.set(key, settled);
    try {
      return await next;
    } finally {
      if (this.locks.get(key) === settled) this.locks.delete(key);
    }
  }
}
