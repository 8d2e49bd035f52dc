import { readFileSync } from "node:fs";
import path from "node:path";

/** A branch name with nothing git would read differently from its file (no `..`, no leading dot, no `@{`). */
const PLAIN_BRANCH = /^(?!.*(?:\.\.|\/\/|\/\.|@\{|\.lock(?:\/|$)))[A-Za-z0-9_][A-Za-z0-9_./-]*(?<![./])$/;
const OBJECT_ID = /^[0-9a-f]{40}$/;

/**
 * The commit `<prefix>/<branch>` (a branch, or with `refs/remotes/origin` a remote-tracking one) of a repository
 * (its git directory) points at, read from the files git keeps refs in — the loose ref, else its line in
 * `packed-refs` — without starting git; null when the branch does not exist; undefined when the answer is not that
 * plain (an unusual name, a symbolic ref), and git should be asked.
 */
export function readBranch(gitDir: string, branch: string, prefix = "refs/heads"): string | null | undefined {
  if (!PLAIN_BRANCH.test(branch)) return undefined;
  const ref = `${prefix}/${branch}`;
  const loose = readText(path.join(gitDir, ref));
  if (loose !== null) return OBJECT_ID.test(loose.trim()) ? loose.trim() : undefined;
  const packed = readText(path.join(gitDir, "packed-refs"));
  if (packed === null) return null;
  for (const line of packed.split("\n")) {
    const [id, name] = line.split(" ");
    if (name === ref) return id && OBJECT_ID.test(id) ? id : undefined;
  }
  return null;
}

/** A file's text, or null when there is no such file (a path through a missing directory or a file included). */
function readText(file: string): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR") return null;
    throw error;
  }
}
