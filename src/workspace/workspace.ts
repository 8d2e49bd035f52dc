import { promises as fs } from "node:fs";
import { describeGitError, WorkspaceError } from "./git.js";
import { gitlinkAddedSince, NestedRepositoryError, refuseNestedGit } from "./nested-git.js";
import {
  excludeFileOf,
  filesAt,
  literalIgnorePattern,
  restoreGitPointer,
  untrustedGit,
  type GitIdentity,
  type UntrustedGit,
} from "./untrusted-git.js";

export interface CommitResult {
  sha: string;
  changedFiles: string[];
}

/**
 * The installation token for git's requests: as it is, or asked for at each git call that may reach
 * GitHub (a long build's token is renewed while it works, and its lazy blob fetches must use the live one).
 */
export type GitToken = string | null | undefined | (() => Promise<string | null>);

/** The token to send now. */
export async function liveToken(token: GitToken): Promise<string | null | undefined> {
  return typeof token === "function" ? token() : token;
}

/** Where a worktree's repository lives, as Blueprint recorded it when it created the worktree. */
export interface WorktreeRepository {
  /** The worktree's admin directory inside the mirror (`<mirror>/worktrees/<name>`). */
  gitDir: string;
  /** The mirror: pushes start there, so nothing in the worktree takes part in them. */
  mirror: string;
  /** For lazy blob fetches; held in memory only. */
  token: GitToken;
}

/**
 * One job's working tree: read, commit, push. Every git call goes through untrusted-git.ts with the
 * recorded git directory, and first puts back the `.git` pointer if the agent changed it. Every
 * operation that reads or writes the working tree or the index (status, add, commit, diff, push,
 * checkout, the exclude list) first makes sure no nested repository is in it (nested-git.ts) and
 * stops with a NestedRepositoryError when one is; calls on objects alone (show, ls-tree, log,
 * rev-parse) cannot reach one and do not look.
 */
export class Workspace {
  constructor(
    readonly dir: string,
    /** The commit the workspace was created at. */
    readonly baseSha: string,
    readonly cloneUrl: string,
    private readonly repository: WorktreeRepository,
    private readonly cleanup: () => Promise<void>,
  ) {}

  /**
   * Where repo_map keeps this repository's parsed tags between processes: beside the mirror, in the
   * workdir's mirrors area, which the agent's sandbox cannot see, let alone write.
   */
  get tagCacheDir(): string {
    return tagCacheDirOf(this.repository.mirror);
  }

  private async git(options: { token?: boolean; identity?: GitIdentity } = {}): Promise<UntrustedGit> {
    await restoreGitPointer(this.dir, this.repository.gitDir);
    return untrustedGit(
      { gitDir: this.repository.gitDir, workTree: this.dir },
      {
        auth: options.token ? { token: await liveToken(this.repository.token), url: this.cloneUrl } : null,
        identity: options.identity,
        excludesFile: excludeFileOf(this.repository.gitDir),
      },
    );
  }

  /**
   * git for an operation on the working tree or the index: before any git runs, no nested `.git`
   * below the top (the file system alone tells), then no gitlink the base commit did not have.
   * One look per operation, however many git processes it then runs.
   */
  private async treeGit(options: { token?: boolean; identity?: GitIdentity } = {}): Promise<UntrustedGit> {
    await refuseNestedGit(this.dir);
    const git = await this.git(options);
    const gitlink = await gitlinkAddedSince(git, this.baseSha);
    if (gitlink !== null) throw new NestedRepositoryError({ kind: "gitlink", path: gitlink, base: this.baseSha });
    return git;
  }

  /** A file as it is on another ref (e.g. the default branch), or null when it does not exist there. */
  async readAtRef(ref: string, file: string): Promise<string | null> {
    try {
      return await (await this.git({ token: true })).raw(["show", "--no-textconv", `${ref}:${file}`]);
    } catch {
      return null;
    }
  }

  /** Which of `files` are files at `ref` (one git process: `filesAt`). */
  async filesAtRef(ref: string, files: readonly string[]): Promise<Set<string>> {
    return filesAt(await this.git({ token: true }), ref, files);
  }

  /** `git diff --stat` from the merge base with another ref to HEAD. */
  async diffSummary(baseRef: string): Promise<string> {
    try {
      return (
        await (
          await this.treeGit({ token: true })
        ).raw(["diff", "--no-ext-diff", "--no-textconv", "--stat=160", `${baseRef}...HEAD`])
      ).trim();
    } catch (error) {
      return `(the diff could not be computed: ${describeGitError(error)})`;
    }
  }

  /** The whole patch from another commit to HEAD (no external diff or textconv driver runs). */
  async diffSince(baseRef: string): Promise<string> {
    return (await this.treeGit({ token: true })).raw([
      "diff",
      "--no-ext-diff",
      "--no-textconv",
      "--no-color",
      "--find-renames",
      baseRef,
      "HEAD",
    ]);
  }

  /**
   * The regular files directly in a directory of a commit (not symlinks, not subdirectories), with
   * their sizes; empty when the directory does not exist there. `dir` "" is the root.
   */
  async filesInDirAt(ref: string, dir: string): Promise<Array<{ name: string; size: number }>> {
    const listed = await (await this.git({ token: true })).run(["ls-tree", "-z", "-l", `${ref}:${dir}`]);
    if (listed.code !== 0) return [];
    return listed.stdout.split("\0").flatMap((entry) => {
      // `<mode> <type> <object> <size>\t<name>`; 100644/100755 are files, 120000 a symlink.
      const match = /^(100644|100755) blob [0-9a-f]+ +(\d+)\t(.+)$/s.exec(entry);
      return match?.[2] && match[3] ? [{ name: match[3], size: Number(match[2]) }] : [];
    });
  }

  /** Paths that differ from HEAD, untracked included; empty when the tree is clean. */
  async changes(): Promise<string[]> {
    return changedPaths(await this.treeGit());
  }

  /**
   * Paths that differ between two commits, exactly as git stores them (unquoted, whatever they
   * contain); a rename is its old and its new path. Only trees are compared: no blob is fetched.
   */
  async filesChanged(from: string, to: string): Promise<string[]> {
    const out = await (
      await this.git()
    ).raw(["diff", "--no-ext-diff", "--no-textconv", "--name-only", "--no-renames", "-z", from, to]);
    return out.split("\0").filter(Boolean);
  }

  async revParse(ref: string): Promise<string | null> {
    try {
      return (await (await this.git()).raw(["rev-parse", "--verify", `${ref}^{commit}`])).trim();
    } catch {
      return null;
    }
  }

  /** Moves the detached HEAD (and the tree) to another commit. */
  async checkout(sha: string): Promise<void> {
    await (await this.treeGit({ token: true })).raw(["checkout", "--quiet", "--detach", sha]);
  }

  /**
   * Commits between two points, oldest first. `trailer` names a trailer (e.g. `Blueprint-Plan`)
   * whose values are returned with each commit.
   */
  async commitsBetween(
    from: string,
    to: string,
    trailer?: string,
  ): Promise<Array<{ sha: string; subject: string; author: string; trailers: string[] }>> {
    // The trailer key is Blueprint's own constant; refuse anything that could reshape the format.
    if (trailer !== undefined && !/^[A-Za-z][A-Za-z0-9-]*$/.test(trailer))
      throw new WorkspaceError(`not a trailer key: ${trailer}`);
    const trailers = trailer ? `%x1f%(trailers:key=${trailer},valueonly,separator=%x1e)` : "";
    const out = await (
      await this.git()
    ).raw([
      "log",
      "--no-ext-diff",
      "--no-textconv",
      "--reverse",
      `--format=%H%x1f%s%x1f%an${trailers}%x1d`,
      `${from}..${to}`,
    ]);
    return out
      .split("\x1d")
      .map((record) => record.replace(/^\n/, ""))
      .filter(Boolean)
      .map((record) => {
        const [sha = "", subject = "", author = "", values = ""] = record.split("\x1f");
        return {
          sha,
          subject,
          author,
          trailers: values
            .split("\x1e")
            .map((value) => value.trim())
            .filter(Boolean),
        };
      });
  }

  /** A commit's whole message (subject, body and trailers); null when the commit is not there. */
  async commitMessage(sha: string): Promise<string | null> {
    if (!/^[0-9a-f]{7,64}$/i.test(sha)) return null;
    try {
      return await (await this.git()).raw(["log", "-1", "--format=%B", sha, "--"]);
    } catch {
      return null;
    }
  }

  /**
   * Hides what setup commands created (node_modules, build output) from commits without deleting
   * it: such paths go, each as a literal pattern, to this worktree's own exclude file (in its admin
   * directory: out of the tree, read-only to commands), unless the repository already ignores them.
   * The mirror's `info/exclude` is shared by all its worktrees and never written. A name with a
   * line break cannot be listed and stays visible.
   */
  async ignoreUntracked(): Promise<void> {
    const git = await this.treeGit();
    const untracked = (await git.raw(["ls-files", "-z", "--others", "--exclude-standard", "--directory"]))
      .split("\0")
      .filter(Boolean);
    const patterns = untracked.map(literalIgnorePattern).filter((pattern): pattern is string => pattern !== null);
    if (patterns.length === 0) return;
    await fs.appendFile(excludeFileOf(this.repository.gitDir), `${patterns.join("\n")}\n`);
  }

  async head(): Promise<string> {
    return headOf(await this.git());
  }

  /** Commits everything in the tree; returns null when there was nothing to commit. */
  async commitAll(message: string, identity: GitIdentity): Promise<CommitResult | null> {
    const repo = await this.treeGit({ identity });
    const changedFiles = await changedPaths(repo);
    if (changedFiles.length === 0) return null;
    await repo.raw(["add", "--all"]);
    await repo.raw(["commit", "--quiet", "--no-verify", "--no-gpg-sign", "-m", message]);
    return { sha: await headOf(repo), changedFiles };
  }

  /**
   * Pushes HEAD from the mirror, which shares the worktree's objects: no worktree file, config or
   * hook takes part, and the token exists only in that one git process's environment.
   */
  async push(branch: string, token: string | null | undefined): Promise<void> {
    // Nothing here reads the tree, but what would be pushed must not hold a nested repository either.
    const sha = await headOf(await this.treeGit());
    try {
      // To the clone URL itself, not a remote name a changed config could point elsewhere.
      await untrustedGit({ gitDir: this.repository.mirror }, { auth: { token, url: this.cloneUrl } }).raw([
        "push",
        "--quiet",
        "--no-verify",
        this.cloneUrl,
        `${sha}:refs/heads/${branch}`,
      ]);
    } catch (error) {
      throw new WorkspaceError(`the push to ${branch} was rejected: ${describeGitError(error)}`);
    }
  }

  /** Hands the worktree back: it is removed, or reset and kept for a later job on the same repository. */
  async dispose(): Promise<void> {
    await this.cleanup();
  }
}

/** Where repo_map keeps a mirror's parsed tags: beside it, `<name>-<id>.repo-map`. */
export function tagCacheDirOf(mirror: string): string {
  return `${mirror.replace(/\.git$/, "")}.repo-map`;
}

/** Paths that differ from HEAD, untracked included (gitlinks are never descended into). */
async function changedPaths(git: UntrustedGit): Promise<string[]> {
  const status = await git.raw(["status", "--porcelain", "--untracked-files=all", "--ignore-submodules=all"]);
  return status
    .split("\n")
    .filter(Boolean)
    .map((line) => line.slice(3));
}

async function headOf(git: UntrustedGit): Promise<string> {
  return (await git.raw(["rev-parse", "HEAD"])).trim();
}
