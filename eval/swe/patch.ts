import { git } from "./git.js";

/**
 * The files a unified diff touches (new paths; a deleted file by its old path), in diff order.
 * A git diff of an empty or binary file has no ---/+++ lines: its `diff --git` header names it.
 * Used to compare a plan's files with the gold patch's, and to find the files test_patch owns.
 */
export function filesOfPatch(patch: string): string[] {
  const files: string[] = [];
  const add = (file: string | null) => {
    if (file !== null && !files.includes(file)) files.push(file);
  };
  let header: string | null = null;
  let oldPath: string | null = null;
  for (const line of patch.split("\n")) {
    if (line.startsWith("diff --git ")) {
      add(header);
      header = headerPath(line.slice("diff --git ".length));
      oldPath = null;
    } else if (line.startsWith("--- ")) oldPath = diffPath(line.slice(4));
    else if (line.startsWith("+++ ")) {
      add(diffPath(line.slice(4)) ?? oldPath);
      header = null;
    }
  }
  add(header);
  return files;
}

/** `a/x b/x` → `x` (the new side). */
function headerPath(paths: string): string | null {
  const split = paths.lastIndexOf(" b/");
  return split === -1 ? null : paths.slice(split + 3).replace(/^"|"$/g, "");
}

function diffPath(field: string): string | null {
  const path = field.split("\t")[0]?.trim() ?? "";
  if (path === "/dev/null") return null;
  const unquoted = path.startsWith('"') && path.endsWith('"') ? path.slice(1, -1) : path;
  return unquoted.replace(/^[ab]\//, "");
}

/**
 * Applies a diff to the working tree with `git apply` (as SWE-bench's harness does), falling back
 * to a 3-way merge against the index; throws with git's words when neither applies.
 */
export async function applyPatch(dir: string, patch: string, what: string): Promise<void> {
  const text = patch.endsWith("\n") ? patch : `${patch}\n`;
  const direct = await git(["apply", "--whitespace=nowarn", "-"], { cwd: dir, input: text, allowFailure: true });
  if (direct.code === 0) return;
  const merged = await git(["apply", "--3way", "--whitespace=nowarn", "-"], {
    cwd: dir,
    input: text,
    allowFailure: true,
  });
  if (merged.code === 0) return;
  throw new Error(`the ${what} does not apply: ${direct.stderr.trim() || merged.stderr.trim()}`);
}
