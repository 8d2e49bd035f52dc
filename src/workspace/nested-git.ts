import { promises as fs, type Dirent } from "node:fs";
import path from "node:path";
import { WorkspaceError } from "./git.js";
import type { UntrustedGit } from "./untrusted-git.js";

/**
 * Nested repositories in a worktree the agent touched. git descends into a nested repository (a
 * `.git` below the top, at a gitlink of the index or one `add --all` makes) and runs git there with
 * that repository's own config: its filters, fsmonitor, hooks, `core.worktree` and `include.path`
 * then run outside the sandbox, as the App. No setting on the outer git turns all of that off, so
 * Blueprint looks first, with the file system alone, and runs no git over such a tree.
 */

/** What a look through the tree found that stops Blueprint's git. */
export type NestedGit =
  /** A `.git` entry (directory, file or symlink) below the top, e.g. `sub/.git`. */
  | { kind: "repository"; entry: string }
  /** A directory the walk could not list: what is in it cannot be told. */
  | { kind: "unreadable"; dir: string; reason: string }
  /** More entries than a quick walk covers: it is not guessed either way. */
  | { kind: "too-many"; limit: number };

/** Past this many entries (files and directories) a tree counts as holding a nested repository. */
export const MAX_WALKED_ENTRIES = 500_000;
/** Directories listed at once: enough to keep the disk busy, few enough not to hog file handles. */
const PARALLEL_LISTINGS = 16;

/**
 * Whether a name is `.git` as git would find it: also `.GIT` (a case-insensitive file system) and
 * with the characters HFS+ ignores (`.g\u200cit`), as git's own `is_hfs_dotgit` counts them.
 */
function isDotGit(name: string): boolean {
  return name.replace(/[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g, "").toLowerCase() === ".git";
}

type Listing = { dir: string; entries: Dirent[] } | { dir: string; entries: null; reason: string };

/**
 * The first nested `.git` below `root`, or why the walk cannot tell; null when there is none. The
 * top's own `.git` (Blueprint's pointer) is skipped; symlinks are not followed (git does not follow
 * them to find a repository either, and a `.git` symlink is itself reported).
 */
export async function findNestedGit(root: string, limit = MAX_WALKED_ENTRIES): Promise<NestedGit | null> {
  let seen = 0;
  let level = [root];
  while (level.length > 0) {
    const next: string[] = [];
    for (let start = 0; start < level.length; start += PARALLEL_LISTINGS) {
      const listed = await Promise.all(
        level.slice(start, start + PARALLEL_LISTINGS).map(async (dir): Promise<Listing> => {
          try {
            return { dir, entries: await fs.readdir(dir, { withFileTypes: true }) };
          } catch (error) {
            return { dir, entries: null, reason: (error as NodeJS.ErrnoException).code ?? String(error) };
          }
        }),
      );
      for (const listing of listed) {
        const relative = path.relative(root, listing.dir);
        if (listing.entries === null) return { kind: "unreadable", dir: relative || ".", reason: listing.reason };
        seen += listing.entries.length;
        if (seen > limit) return { kind: "too-many", limit };
        for (const entry of listing.entries) {
          if (isDotGit(entry.name)) {
            if (listing.dir !== root) return { kind: "repository", entry: path.join(relative, entry.name) };
          } else if (entry.isDirectory()) {
            next.push(path.join(listing.dir, entry.name));
          }
        }
      }
    }
    level = next;
  }
  return null;
}

/** A path for a message: in a code span, with nothing in it that could end the span or the line. */
function shown(file: string): string {
  const plain = file.replace(/[\u0000-\u001f\u007f`]/g, "?");
  return `\`${plain.length > 200 ? `${plain.slice(0, 200)}…` : plain}\``;
}

/** Why Blueprint ran no git over a working tree, worded for the person (or agent) who can fix it. */
export class NestedRepositoryError extends WorkspaceError {
  constructor(readonly finding: NestedGit | { kind: "gitlink"; path: string; base: string }) {
    super(explain(finding));
  }
}

function explain(finding: NestedRepositoryError["finding"]): string {
  const rule =
    "Blueprint commits no nested git repository and runs no git over a tree that holds one (git would follow that repository's own settings, outside the sandbox)";
  switch (finding.kind) {
    case "repository": {
      const dir = path.dirname(finding.entry);
      return `a command left a nested git repository at ${shown(`${dir}/`)} (${shown(finding.entry)}). ${rule}: delete ${shown(finding.entry)}, or make that repository outside the working tree`;
    }
    case "gitlink":
      return `the index records a nested repository (a gitlink) at ${shown(finding.path)}, which commit ${finding.base.slice(0, 12)} did not have, and Blueprint did not put it there. ${rule}: a new \`/build\` starts from a fresh worktree`;
    case "unreadable":
      return `a command left the directory ${shown(finding.dir)} unreadable (${finding.reason}), so Blueprint cannot check it for a nested git repository. ${rule}: give the directory back its read permission (\`chmod u+rx\`)`;
    case "too-many":
      return `the working tree holds more than ${finding.limit} files and directories, too many to check quickly for a nested git repository. ${rule}: have the commands write less into the working tree (build output and caches outside it)`;
  }
}

/** Throws a NestedRepositoryError when the tree holds a nested `.git` (or cannot be checked). */
export async function refuseNestedGit(root: string): Promise<void> {
  const found = await findNestedGit(root);
  if (found) throw new NestedRepositoryError(found);
}

/**
 * A gitlink the index records that `base` did not have at that path, or null. It reads the index
 * and objects only (`diff-index --cached`), never the working tree; Blueprint never adds one, so
 * one here was put in the index by something else (a command without the sandbox, which can write it).
 */
export async function gitlinkAddedSince(git: UntrustedGit, base: string): Promise<string | null> {
  const fields = (
    await git.raw(["diff-index", "--cached", "--raw", "-z", "--no-renames", "--ignore-submodules=none", base])
  ).split("\0");
  // `:<old mode> <new mode> <old object> <new object> <status>`, then the path.
  for (let at = 0; at + 1 < fields.length; at += 2) {
    const [oldMode, newMode] = (fields[at] ?? "").slice(1).split(" ");
    if (newMode === "160000" && oldMode !== "160000") return fields[at + 1] ?? null;
  }
  return null;
}
