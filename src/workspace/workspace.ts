import { promises as fs } from "node:fs";
import path from "node:path";
import { describeGitError, git, gitEnv, WorkspaceError, type GitIdentity } from "./git.js";

export interface CommitResult {
  sha: string;
  changedFiles: string[];
}

/** One job's working tree: read, commit, push. */
export class Workspace {
  constructor(
    readonly dir: string,
    /** The commit the workspace was created at. */
    readonly baseSha: string,
    readonly cloneUrl: string,
    private readonly cleanup: () => Promise<void>,
    /** Carries the token for lazy blob fetches; held in memory only. */
    private readonly fetchEnv: Record<string, string> = gitEnv(),
  ) {}

  /** A file as it is on another ref (e.g. the default branch), or null when it does not exist there. */
  async readAtRef(ref: string, file: string): Promise<string | null> {
    try {
      return await git(this.dir, this.fetchEnv).raw(["show", `${ref}:${file}`]);
    } catch {
      return null;
    }
  }

  /** `git diff --stat` from the merge base with another ref to HEAD. */
  async diffSummary(baseRef: string): Promise<string> {
    try {
      return (await git(this.dir, this.fetchEnv).raw(["diff", "--stat=160", `${baseRef}...HEAD`])).trim();
    } catch (error) {
      return `(the diff could not be computed: ${describeGitError(error)})`;
    }
  }

  /** Paths that differ from HEAD, untracked included; empty when the tree is clean. */
  async changes(): Promise<string[]> {
    const status = await git(this.dir, gitEnv()).raw(["status", "--porcelain", "--untracked-files=all"]);
    return status
      .split("\n")
      .filter(Boolean)
      .map((line) => line.slice(3));
  }

  async revParse(ref: string): Promise<string | null> {
    try {
      return (await git(this.dir, gitEnv()).raw(["rev-parse", "--verify", `${ref}^{commit}`])).trim();
    } catch {
      return null;
    }
  }

  /** Moves the detached HEAD (and the tree) to another commit. */
  async checkout(sha: string): Promise<void> {
    await git(this.dir, this.fetchEnv).raw(["checkout", "--quiet", "--detach", sha]);
  }

  /** Commits between two points, oldest first. */
  async commitsBetween(from: string, to: string): Promise<Array<{ sha: string; subject: string; author: string }>> {
    const out = await git(this.dir, gitEnv()).raw(["log", "--reverse", "--format=%H%x1f%s%x1f%an", `${from}..${to}`]);
    return out
      .split("\n")
      .filter(Boolean)
      .map((line) => {
        const [sha = "", subject = "", author = ""] = line.split("\x1f");
        return { sha, subject, author };
      });
  }

  /**
   * Hides what setup commands created (node_modules, build output) from commits without deleting
   * it: such paths go to this worktree's exclude list unless the repository already ignores them.
   */
  async ignoreUntracked(): Promise<void> {
    const untracked = (await git(this.dir, gitEnv()).raw(["ls-files", "--others", "--exclude-standard", "--directory"])).split("\n").filter(Boolean);
    if (untracked.length === 0) return;
    const infoDir = (await git(this.dir, gitEnv()).raw(["rev-parse", "--git-path", "info"])).trim();
    const target = path.resolve(this.dir, infoDir);
    await fs.mkdir(target, { recursive: true });
    // info/exclude is shared by the mirror's worktrees: add each pattern once.
    const file = path.join(target, "exclude");
    const existing = new Set((await fs.readFile(file, "utf8").catch(() => "")).split("\n"));
    const patterns = untracked.map((entry) => `/${entry}`).filter((pattern) => !existing.has(pattern));
    if (patterns.length > 0) await fs.appendFile(file, `\n${patterns.join("\n")}\n`);
  }

  async head(): Promise<string> {
    return (await git(this.dir, gitEnv()).raw(["rev-parse", "HEAD"])).trim();
  }

  /** Commits everything in the tree; returns null when there was nothing to commit. */
  async commitAll(message: string, identity: GitIdentity): Promise<CommitResult | null> {
    const changedFiles = await this.changes();
    if (changedFiles.length === 0) return null;
    const repo = git(this.dir, gitEnv(null, identity));
    await repo.raw(["add", "--all"]);
    await repo.raw(["commit", "--quiet", "--no-verify", "-m", message]);
    return { sha: await this.head(), changedFiles };
  }

  async push(branch: string, token: string | null | undefined): Promise<void> {
    try {
      await git(this.dir, gitEnv(token)).raw(["push", "--quiet", "origin", `HEAD:refs/heads/${branch}`]);
    } catch (error) {
      throw new WorkspaceError(`the push to ${branch} was rejected: ${describeGitError(error)}`);
    }
  }

  /** Hands the worktree back: it is removed, or reset and kept for a later job on the same repository. */
  async dispose(): Promise<void> {
    await this.cleanup();
  }
}
