import { promises as fs } from "node:fs";
import path from "node:path";
import { MAX_PATH_LENGTH, absolutePathProblem, quotePath, tooLong } from "../plan/validate.js";

export class PathError extends Error {}

export interface ResolvedPath {
  /** Absolute path inside the workspace. */
  absolute: string;
  /** Path relative to the workspace root, with forward slashes. */
  relative: string;
}

/**
 * Resolves a model-supplied path inside the workspace. Refuses over-long and absolute paths (POSIX
 * or Windows), `..` escapes, anything under `.git/`, and symlinks whose target lies outside the workspace.
 */
export async function resolveInWorkspace(root: string, requested: string | undefined | null): Promise<ResolvedPath> {
  const raw = (requested ?? ".").trim() || ".";
  // Before anything else: normalising a long "../" chain is quadratic and would block the event loop.
  if (raw.length > MAX_PATH_LENGTH) throw new PathError(`${quotePath(raw)} ${tooLong(raw)}`);
  if (raw.includes("\0")) throw new PathError("the path contains a NUL character");
  const absoluteProblem = absolutePathProblem(raw);
  if (absoluteProblem) throw new PathError(`"${raw}" ${absoluteProblem}`);
  const relative = path.posix.normalize(raw.replaceAll("\\", "/")).replace(/\/+$/, "") || ".";
  if (relative === ".." || relative.startsWith("../")) throw new PathError(`"${raw}" leaves the repository`);
  if (relative === ".git" || relative.startsWith(".git/"))
    throw new PathError(`"${raw}" is inside .git/, which the tools never touch`);

  const realRoot = await fs.realpath(root);
  const absolute = path.join(realRoot, relative);
  const real = await realpathOfNearestExisting(absolute);
  if (real !== realRoot && !real.startsWith(realRoot + path.sep)) {
    throw new PathError(`"${raw}" leads outside the repository through a symbolic link`);
  }
  const realRelative = path.relative(realRoot, real).split(path.sep).join("/");
  if (realRelative === ".git" || realRelative.startsWith(".git/")) {
    throw new PathError(`"${raw}" leads into .git/ through a symbolic link`);
  }
  return { absolute, relative };
}

async function realpathOfNearestExisting(target: string, depth = 0): Promise<string> {
  let current = target;
  const rest: string[] = [];
  for (;;) {
    try {
      const real = await fs.realpath(current);
      return path.join(real, ...rest.reverse());
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      // A dangling symlink: follow where it points, since a write would land there.
      const link = await fs.readlink(current).catch(() => null);
      if (link !== null && depth < 20) {
        const pointed = path.resolve(path.dirname(current), link);
        return realpathOfNearestExisting(path.join(pointed, ...rest.reverse()), depth + 1);
      }
      const parent = path.dirname(current);
      if (parent === current) return target;
      rest.push(path.basename(current));
      current = parent;
    }
  }
}

export function isWorkflowPath(relative: string): boolean {
  return relative.startsWith(".github/workflows/") || relative === ".github/workflows";
}
