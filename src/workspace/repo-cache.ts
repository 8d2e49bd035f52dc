import { createHash, randomUUID } from "node:crypto";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describeGitError, git, gitEnv, WorkspaceError } from "./git.js";
import { Workspace } from "./workspace.js";

export interface WorkspaceRequest {
  /** From the webhook payload (`repository.clone_url`), never hard-coded. */
  cloneUrl: string;
  /** The ref to check out, e.g. `refs/heads/main` or `refs/pull/7/head`. */
  ref: string;
  /** A commit to check out instead of the ref's tip (it must be reachable from the ref). */
  sha?: string | undefined;
  token?: string | null | undefined;
}

export function defaultWorkdir(): string {
  return path.join(os.tmpdir(), "blueprint");
}

/**
 * Per-repository cached mirrors: the first job clones blobless, later jobs only fetch.
 * Each job gets its own detached worktree, so jobs on one repository do not share a working tree.
 *
 * Worktrees are pooled per mirror: when a job is done its worktree is reset (`reset --hard`,
 * `clean -ffdx`: tracked files restored, everything untracked or ignored removed) and kept only
 * if `git status --ignored` then shows nothing at all; the next job on the same repository checks
 * out its commit there, which rewrites only the files that differ. Anything odd removes the
 * worktree instead, and a job never shares a worktree with a running job.
 */
export class RepoCache {
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly idle = new Map<string, string[]>();
  private readonly poolSize: number;
  private readonly fetches: Semaphore;

  constructor(
    readonly workdir: string = defaultWorkdir(),
    options: {
      /** Clean worktrees kept per repository for later jobs (0 turns pooling off); default 2. */
      poolSize?: number;
      /** Clones and fetches running at once across all repositories; default 4. */
      maxFetches?: number;
    } = {},
  ) {
    this.poolSize = options.poolSize ?? 2;
    this.fetches = new Semaphore(options.maxFetches ?? 4);
  }

  /** Fetches the repository into its mirror (cloning it the first time). */
  async sync(request: Omit<WorkspaceRequest, "sha">): Promise<Mirror> {
    const mirror = this.mirrorPath(request.cloneUrl);
    const env = gitEnv(request.token);
    // A burst of jobs (many repositories at once) must not starve the process of CPU and I/O.
    await this.withLock(mirror, () => this.fetches.run(() => this.syncMirror(mirror, request, env)));
    return new Mirror(this, mirror, request.cloneUrl, env);
  }

  /** A fresh worktree at a ref (or a commit reachable from it). */
  async prepare(request: WorkspaceRequest): Promise<Workspace> {
    const mirror = await this.sync(request);
    const sha = await mirror.resolve(request.sha ?? request.ref);
    if (!sha) throw new WorkspaceError(`the repository has no ${request.sha ? `commit ${request.sha}` : `ref ${request.ref}`}`);
    return mirror.checkout(sha);
  }

  /** @internal used by Mirror */
  async addWorktree(mirror: string, cloneUrl: string, sha: string, env: Record<string, string>): Promise<Workspace> {
    const dir = (await this.reuse(mirror, sha, env)) ?? (await this.freshWorktree(mirror, sha, env));
    return new Workspace(dir, sha, cloneUrl, () => this.release(mirror, dir), env);
  }

  private async freshWorktree(mirror: string, sha: string, env: Record<string, string>): Promise<string> {
    const dir = path.join(this.workdir, "jobs", randomUUID());
    await fs.mkdir(path.dirname(dir), { recursive: true });
    await this.withLock(mirror, () => git(mirror, env).raw(["worktree", "add", "--detach", dir, sha]));
    return dir;
  }

  /**
   * An idle worktree of this mirror moved to `sha`, or null when there is none. It is used only
   * when `git status --ignored` then shows nothing at all; otherwise it is removed.
   */
  private async reuse(mirror: string, sha: string, env: Record<string, string>): Promise<string | null> {
    const dir = this.idle.get(mirror)?.pop();
    if (!dir) return null;
    try {
      // release() already reset and cleaned it; the status check proves nothing is left.
      await git(dir, env).raw(["checkout", "--quiet", "--force", "--detach", sha]);
      const left = await git(dir, gitEnv()).raw(["status", "--porcelain", "--ignored", "--untracked-files=all"]);
      if (left.trim() === "") return dir;
    } catch {
      // Not reusable: removed below.
    }
    await this.remove(mirror, dir);
    return null;
  }

  /** A finished job's worktree: reset (its leftovers deleted now, not later) and pooled, or removed. */
  private async release(mirror: string, dir: string): Promise<void> {
    const pool = this.idle.get(mirror) ?? [];
    if (pool.length < this.poolSize) {
      try {
        const tree = git(dir, gitEnv());
        await tree.raw(["reset", "--quiet", "--hard"]);
        await tree.raw(["clean", "-ffdxq"]);
        if (pool.length < this.poolSize) {
          pool.push(dir);
          this.idle.set(mirror, pool);
          return;
        }
      } catch {
        // Not reusable: removed below.
      }
    }
    await this.remove(mirror, dir);
  }

  mirrorPath(cloneUrl: string): string {
    const id = createHash("sha256").update(cloneUrl).digest("hex").slice(0, 16);
    const name = path.basename(cloneUrl).replace(/\.git$/, "").replace(/[^A-Za-z0-9._-]/g, "_") || "repo";
    return path.join(this.workdir, "mirrors", `${name}-${id}.git`);
  }

  private async syncMirror(mirror: string, request: WorkspaceRequest, env: Record<string, string>): Promise<void> {
    const refspecs = ["+refs/heads/*:refs/heads/*"];
    if (!request.ref.startsWith("refs/heads/")) refspecs.push(`+${request.ref}:${request.ref}`);
    const exists = await fs.stat(path.join(mirror, "HEAD")).then(() => true, () => false);
    try {
      if (!exists) {
        await fs.mkdir(path.dirname(mirror), { recursive: true });
        await git(path.dirname(mirror), env).raw(["clone", "--bare", "--filter=blob:none", "--quiet", request.cloneUrl, mirror]);
        if (refspecs.length > 1) await git(mirror, env).raw(["fetch", "--quiet", "origin", ...refspecs.slice(1)]);
      } else {
        await git(mirror, env).raw(["fetch", "--quiet", "--prune", "origin", ...refspecs]);
      }
    } catch (error) {
      throw new WorkspaceError(`could not fetch the repository: ${describeGitError(error)}`);
    }
  }

  private async remove(mirror: string, dir: string): Promise<void> {
    await this.withLock(mirror, async () => {
      await git(mirror, gitEnv()).raw(["worktree", "remove", "--force", dir]).catch(() => undefined);
      await fs.rm(dir, { recursive: true, force: true });
      await git(mirror, gitEnv()).raw(["worktree", "prune"]).catch(() => undefined);
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

/** At most `limit` tasks at once; the rest wait in order. */
export class Semaphore {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await task();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

/** A synced mirror: read files at refs without a working tree, or check one out. */
export class Mirror {
  constructor(
    private readonly cache: RepoCache,
    readonly path: string,
    readonly cloneUrl: string,
    private readonly env: Record<string, string>,
  ) {}

  async resolve(ref: string): Promise<string | null> {
    try {
      return (await git(this.path, this.env).raw(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`])).trim() || null;
    } catch {
      return null;
    }
  }

  async readFile(ref: string, file: string): Promise<string | null> {
    try {
      return await git(this.path, this.env).raw(["show", `${ref}:${file}`]);
    } catch {
      return null;
    }
  }

  /** Paths that differ between two commits. */
  async changedFiles(from: string, to: string): Promise<string[]> {
    const out = await git(this.path, this.env).raw(["diff", "--name-only", "--no-renames", from, to]);
    return out.split("\n").filter(Boolean);
  }

  checkout(sha: string): Promise<Workspace> {
    return this.cache.addWorktree(this.path, this.cloneUrl, sha, this.env);
  }
}
