import { filesAt, untrustedGit } from "./untrusted-git.js";
import { liveToken, type GitToken, type Workspace } from "./workspace.js";

/** What deleting a branch on the remote came to: only ever the commit it was expected at. */
export type BranchDeletion =
  | { kind: "deleted" }
  | { kind: "gone" }
  /** The branch is at another commit (pushed after Blueprint looked): kept. */
  | { kind: "moved"; tip: string }
  /** The remote refused (a protected branch, a token that may not push): git's reason. */
  | { kind: "refused"; reason: string };

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

  /** Which of `files` are files at `ref` (one git process: `filesAt`). */
  async filesAt(ref: string, files: readonly string[]): Promise<Set<string>> {
    return filesAt(await this.git(), ref, files);
  }

  /** Paths that differ between two commits. */
  async changedFiles(from: string, to: string): Promise<string[]> {
    const out = await (await this.git()).raw(["diff", "--no-ext-diff", "--name-only", "--no-renames", from, to]);
    return out.split("\n").filter(Boolean);
  }

  /** Who made each commit between two points (oldest first): its author's and committer's name and e-mail. */
  async commitPeople(
    from: string,
    to: string,
  ): Promise<Array<{ sha: string; author: GitPerson; committer: GitPerson }>> {
    const out = await (
      await this.git()
    ).raw(["log", "--reverse", "--format=%H%x1f%an%x1f%ae%x1f%cn%x1f%ce%x1e", `${from}..${to}`]);
    return out
      .split("\x1e")
      .map((record) => record.trim())
      .filter(Boolean)
      .map((record) => {
        const [sha = "", authorName = "", authorEmail = "", committerName = "", committerEmail = ""] =
          record.split("\x1f");
        return {
          sha,
          author: { name: authorName, email: authorEmail },
          committer: { name: committerName, email: committerEmail },
        };
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

  /**
   * Deletes a branch on the remote only while it is still at `tip`: `push --force-with-lease`
   * sends `tip` as the expected old value, and the remote checks it under the ref's lock, so a
   * commit pushed after Blueprint looked (even during this push) is never deleted.
   */
  async deleteBranch(branch: string, tip: string): Promise<BranchDeletion> {
    const ref = `refs/heads/${branch}`;
    if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(tip)) throw new Error(`not a commit id: ${tip}`);
    const git = await this.git();
    const pushed = await git.run([
      "push",
      "--porcelain",
      "--no-verify",
      `--force-with-lease=${ref}:${tip}`,
      this.cloneUrl,
      `:${ref}`,
    ]);
    if (pushed.code === 0) return { kind: "deleted" };
    // Rejected: "stale info" (checked before sending) or a failed ref lock (checked by the remote) both mean
    // the branch is not at `tip`; the remote says where it is now. Anything else is the remote's refusal.
    const listed = await git.run(["ls-remote", "--refs", this.cloneUrl, ref]);
    const now = listed.code === 0 ? (listed.stdout.split("\t")[0] ?? "").trim() : null;
    if (now === "") return { kind: "gone" };
    if (now && now !== tip) return { kind: "moved", tip: now };
    return { kind: "refused", reason: pushRefusal(pushed.stdout, pushed.stderr) };
  }

  checkout(sha: string): Promise<Workspace> {
    return this.cache.addWorktree(this.path, this.cloneUrl, sha, this.token);
  }
}

/** The remote's reason from `push --porcelain` (`!\t:ref\t[remote rejected] (reason)`), else git's error. */
function pushRefusal(stdout: string, stderr: string): string {
  const line = stdout.split("\n").find((entry) => entry.startsWith("!"));
  const reason = line?.split("\t")[2]?.trim();
  const remote = stderr
    .split("\n")
    .filter((entry) => entry.startsWith("remote: "))
    .map((entry) => entry.slice("remote: ".length).trim())
    .filter(Boolean);
  return [reason, ...remote].filter(Boolean).join(" ") || stderr.trim() || "the push was refused";
}

function ownRef(ref: string): string {
  if (!/^refs\/blueprint\/[A-Za-z0-9._/-]+$/.test(ref) || ref.includes(".."))
    throw new Error(`not one of Blueprint's own refs: ${ref}`);
  return ref;
}
