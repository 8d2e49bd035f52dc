import path from "node:path";
import type { InstructionFile, RepoInstructions } from "../agent/prompts.js";

/**
 * The repository's instructions for coding agents: the default branch's root `AGENTS.md` and, for
 * the paths a step names, those in their directories from the root down (the nearer wins where they
 * disagree), 32 KiB in all; with none, `CLAUDE.md` or `.github/copilot-instructions.md`. They are
 * read from the default branch (the committed branch for the CLI), never from a pull request's own
 * changes: those are code under review, like `.github/blueprint.yml`.
 */

export const INSTRUCTIONS_BUDGET_BYTES = 32 * 1024;
const AGENTS_FILE = "AGENTS.md";
const FALLBACKS = ["CLAUDE.md", ".github/copilot-instructions.md"];
/** At most this many directories are looked in (a plan names at most a few hundred files). */
const MAX_DIRS = 64;

/** The directories from the root down to each path's own, root first, each once. */
export function instructionDirs(paths: readonly string[]): string[] {
  const dirs = new Set<string>([""]);
  for (const file of paths) {
    const dir = path.posix.dirname(path.posix.normalize(file.replaceAll("\\", "/")));
    if (dir === "." || dir === ".." || dir.startsWith("../") || dir.startsWith("/")) continue;
    const parts = dir.split("/");
    for (let depth = 1; depth <= parts.length; depth++) dirs.add(parts.slice(0, depth).join("/"));
  }
  const depth = (dir: string) => (dir === "" ? 0 : dir.split("/").length);
  return [...dirs].sort((a, b) => depth(a) - depth(b) || a.localeCompare(b)).slice(0, MAX_DIRS);
}

/**
 * The instructions for work on `paths` (none: the root's alone), read with `read` at the default branch. `present`
 * says in one call which of the candidate files exist, and only those are read: a plan's paths name a few dozen
 * directories, and most have no AGENTS.md (one git process, not one for each).
 */
export async function readRepoInstructions(
  read: (file: string) => Promise<string | null>,
  paths: readonly string[],
  present: (files: readonly string[]) => Promise<Set<string>>,
): Promise<RepoInstructions> {
  const agents = instructionDirs(paths).map((dir) => (dir ? `${dir}/${AGENTS_FILE}` : AGENTS_FILE));
  const there = await present([...agents, ...FALLBACKS]).catch(() => new Set<string>());
  let found = await readEach(
    read,
    agents.filter((file) => there.has(file)),
  );
  for (const fallback of FALLBACKS) {
    if (found.length > 0) break;
    found = await readEach(read, there.has(fallback) ? [fallback] : []);
  }
  return withinBudget(found);
}

async function readEach(read: (file: string) => Promise<string | null>, files: string[]): Promise<InstructionFile[]> {
  const texts = await Promise.all(files.map((file) => read(file).catch(() => null)));
  return files.flatMap((file, index) => {
    const text = texts[index];
    return text && text.trim() ? [{ path: file, text }] : [];
  });
}

function withinBudget(found: InstructionFile[]): RepoInstructions {
  const files: InstructionFile[] = [];
  const omitted: string[] = [];
  let left = INSTRUCTIONS_BUDGET_BYTES;
  for (const file of found) {
    const size = Buffer.byteLength(file.text);
    if (size <= left) {
      files.push(file);
      left -= size;
    } else if (left >= 512) {
      // The first file that does not fit is cut at a line break; the rest are named, not given.
      const cut = Buffer.from(file.text)
        .subarray(0, left)
        .toString("utf8")
        .replace(/\uFFFD$/, "");
      const lineEnd = cut.lastIndexOf("\n");
      files.push({
        path: file.path,
        text: `${lineEnd > 0 ? cut.slice(0, lineEnd) : cut}\n[… cut: the repository's instructions are limited to 32 KiB in all]`,
      });
      left = 0;
    } else {
      omitted.push(file.path);
      left = 0;
    }
  }
  return { files, omitted };
}
