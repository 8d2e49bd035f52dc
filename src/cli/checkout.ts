import { pathToFileURL } from "node:url";
import { untrustedGit } from "../workspace/untrusted-git.js";

/** The local git checkout the CLI works on. */
export interface Checkout {
  /** Top of the working tree. */
  root: string;
  /** Its .git directory, where Blueprint keeps the thread. */
  gitDir: string;
  /** The checked-out branch; null when HEAD is detached. */
  branch: string | null;
  head: string;
  /** Uncommitted changes exist (Blueprint does not see them). */
  dirty: boolean;
  /** What the engine clones from and pushes to. */
  cloneUrl: string;
}

/** A problem the person at the terminal can fix; printed without a stack trace. */
export class CliError extends Error {}

export async function findCheckout(cwd: string): Promise<Checkout> {
  const repo = untrustedGit({ discoverFrom: cwd });
  let root: string;
  let gitDir: string;
  try {
    [root = "", gitDir = ""] = (await repo.raw(["rev-parse", "--show-toplevel", "--absolute-git-dir"]))
      .trim()
      .split("\n");
  } catch {
    throw new CliError(`${cwd} is not inside a git checkout. Run blueprint in the working tree of a git repository.`);
  }
  if (!root) throw new CliError(`${cwd} is not inside a git working tree (a bare repository has none).`);
  const head = await repo.raw(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]).then(
    (out) => out.trim(),
    () => "",
  );
  if (!head)
    throw new CliError("the repository has no commits yet. Blueprint plans on committed code: commit something first.");
  const branch = await repo.raw(["symbolic-ref", "--quiet", "--short", "HEAD"]).then(
    (out) => out.trim() || null,
    () => null,
  );
  const dirty = (await repo.raw(["status", "--porcelain"])).trim() !== "";
  return { root, gitDir, branch, head, dirty, cloneUrl: pathToFileURL(root).href };
}
