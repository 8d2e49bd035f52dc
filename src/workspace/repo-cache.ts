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
 */
export class RepoCache {
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(readonly workdir: string = defaultWorkdir()) {}

  /** Fetches the repository into its mirror (cloning it the first time). */
  async sync(request: Omit<WorkspaceRequest, "sha">): Promise<Mirror> {
    const mirror = this.mirrorPath(request.cloneUrl);
    const env = gitEnv(request.token);
    await this.withLock(mirror, () => this.syncMirror(mirror, request, env));
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
    const dir = path.join(this.workdir, "jobs", randomUUID());
    await fs.mkdir(path.dirname(dir), { recursive: true });
    await this.withLock(mirror, () => git(mirror, env).raw(["worktree", "add", "--detach", dir, sha]));
    return new Workspace(dir, sha, cloneUrl, () => this.remove(mirror, dir), env);
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
