import { untrustedGit } from "./untrusted-git.js";
import { liveToken, type GitToken, type Workspace } from "./workspace.js";

export interface GitPerson {
  name: string;
  email: string;
}

/** Where a mirror's worktrees come from (the repository cache, which pools them). */
export interface WorktreeSource {
  addWorktree(mirror: string, cloneUrl: string, sha: string, token: GitToken): Promise<Workspace>;
}

/** A synced mirror: read files at refs without a working tree, or check one out. */
export class Mirror {
  constructor(
    private readonly cache: WorktreeSource,
    readonly path: string,
    readonly cloneUrl: string,
    /** For a blobless clone's lazy blob fetches; held in memory only. */
    private readonly token: GitToken,
  ) {}

  private async git() {
    return untrustedGit({ gitDir: this.path }, { auth: { token: await liveToken(this.token), url: this.cloneUrl } });
  }

  async resolve(ref: string): Promise<string | null> {
    try {
      return (await (await this.git()).raw(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`])).trim() || null;
    } catch {
      return null;
    }
  }

  async readFile(ref: string, file: string): Promise<string | null> {
    try {
      return await (await this.git()).raw(["show", "--no-textconv", `${ref}:${file}`]);
    } catch {
      return null;
    }
  }

  /** Paths that differ between two commits. */
  async changedFiles(from: string, to: string): Promise<string[]> {
    const out = await (await this.git()).raw(["diff", "--no-ext-diff", "--name-only", "--no-renames", from, to]);
    return out.split("\n").filter(Boolean);
  }

  /** Who made each commit between two points (oldest first): its author's and committer's name and e-mail. */
  async commitPeople(from: string, to: string): Promise<Array<{ sha: string; author: GitPerson; committer: GitPerson }>> {
    const out = await (await this.git()).raw(["log", "--reverse", "--format=%H%x1f%an%x1f%ae%x1f%cn%x1f%ce%x1e", `${from}..${to}`]);
    return out
      .split("\x1e")
      .map((record) => record.trim())
      .filter(Boolean)
      .map((record) => {
        const [sha = "", authorName = "", authorEmail = "", committerName = "", committerEmail = ""] = record.split("\x1f");
        return { sha, author: { name: authorName, email: authorEmail }, committer: { name: committerName, email: committerEmail } };
      });
  }

  /**
   * Keeps a commit under a ref of Blueprint's own (`refs/blueprint/…`): no fetch prunes it and no
   * push sends it, so a commit that must not be pushed yet survives the worktree it was made in.
   */
  async keepCommit(ref: string, sha: string): Promise<void> {
    await (await this.git()).raw(["update-ref", ownRef(ref), sha]);
  }

  async dropRef(ref: string): Promise<void> {
    await (await this.git()).raw(["update-ref", "-d", ownRef(ref)]);
  }

  checkout(sha: string): Promise<Workspace> {
    return this.cache.addWorktree(this.path, this.cloneUrl, sha, this.token);
  }
}

function ownRef(ref: string): string {
  if (!/^refs\/blueprint\/[A-Za-z0-9._/-]+$/.test(ref) || ref.includes("..")) throw new Error(`not one of Blueprint's own refs: ${ref}`);
  return ref;
}
