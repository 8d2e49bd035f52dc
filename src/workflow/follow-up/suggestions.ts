import { readFile, writeFile } from "node:fs/promises";
import { resolveInWorkspace } from "../../tools/paths.js";
import type { ReviewThread } from "../ports.js";

/**
 * GitHub's suggested changes: a review comment holding a ```suggestion block proposes the block's lines in place of the
 * lines it is on. Blueprint applies them as written, like the "Commit suggestion" button, without the model.
 */

/** The first suggestion block of a comment, as written (null when it has none). */
export function suggestionIn(body: string): string | null {
  const text = body.replace(/\r\n?/g, "\n");
  const match = /^[ \t]*(`{3,}|~{3,})[ \t]*suggestion[ \t]*\n([\s\S]*?)^[ \t]*\1[ \t]*$/m.exec(text);
  return match ? (match[2] ?? "") : null;
}

/** A thread that can be applied as a suggestion: its first comment suggests, on lines of the new file. */
export interface Suggestion {
  thread: ReviewThread;
  path: string;
  /** 1-based, inclusive. */
  start: number;
  end: number;
  /** The lines to put there, each ending with a newline (none: the lines are deleted). */
  replacement: string;
}

export function suggestionOf(thread: ReviewThread): Suggestion | null {
  const first = thread.comments[0];
  const block = first ? suggestionIn(first.body) : null;
  if (block === null || thread.side !== "RIGHT" || thread.line === null) return null;
  return { thread, path: thread.path, start: thread.startLine ?? thread.line, end: thread.line, replacement: block };
}

/**
 * Applies the suggestions of one file, bottom up so that the lines of those above stay where they were. A suggestion
 * no longer applies when its lines are not where the thread's diff hunk shows them, or overlap another one's: it goes
 * to the model with its thread instead. Answers the ones applied.
 */
export async function applySuggestions(
  root: string,
  suggestions: Suggestion[],
): Promise<{ applied: Suggestion[]; stale: Suggestion[] }> {
  const applied: Suggestion[] = [];
  const stale: Suggestion[] = [];
  const byFile = new Map<string, Suggestion[]>();
  for (const suggestion of suggestions)
    byFile.set(suggestion.path, [...(byFile.get(suggestion.path) ?? []), suggestion]);
  for (const [file, inFile] of byFile) {
    const resolved = await resolveInWorkspace(root, file).catch(() => null);
    const text = resolved ? await readFile(resolved.absolute, "utf8").catch(() => null) : null;
    if (!resolved || text === null) {
      stale.push(...inFile);
      continue;
    }
    const lines = text.split(/(?<=\n)/);
    let floor = Number.POSITIVE_INFINITY;
    for (const suggestion of [...inFile].sort((a, b) => b.end - a.end)) {
      if (suggestion.end >= floor || !stillThere(lines, suggestion)) {
        stale.push(suggestion);
        continue;
      }
      const replacement = suggestion.replacement === "" ? [] : suggestion.replacement.split(/(?<=\n)/);
      const last = lines[suggestion.end - 1] ?? "";
      // The file's last line without a newline keeps none.
      if (!last.endsWith("\n") && replacement.length > 0)
        replacement[replacement.length - 1] = (replacement.at(-1) ?? "").replace(/\n$/, "");
      lines.splice(suggestion.start - 1, suggestion.end - suggestion.start + 1, ...replacement);
      floor = suggestion.start;
      applied.push(suggestion);
    }
    if (applied.some((suggestion) => suggestion.path === file)) await writeFile(resolved.absolute, lines.join(""));
  }
  return { applied, stale };
}

/** The thread's line reads in the file as the diff hunk showed it when the comment was made. */
function stillThere(lines: string[], suggestion: Suggestion): boolean {
  if (suggestion.start < 1 || suggestion.end < suggestion.start || suggestion.end > lines.length) return false;
  const hunkLast = suggestion.thread.diffHunk
    .split("\n")
    .filter((line) => line !== "")
    .at(-1);
  if (hunkLast === undefined) return true;
  if (hunkLast.startsWith("-")) return false;
  return (lines[suggestion.end - 1] ?? "").replace(/\n$/, "") === hunkLast.slice(1);
}
