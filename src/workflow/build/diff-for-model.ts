import { isWithinTokenLimit } from "gpt-tokenizer";

/** Diffs may contain special-token text (`<|endoftext|>`): count it as the plain text it is. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };
const MAX_CHARS_PER_TOKEN = 64;

export interface BudgetedDiff {
  text: string;
  /** Files whose patch did not fit the budget (they are still named in the text). */
  omitted: string[];
}

/**
 * A branch's patch cut to a token budget (gpt-tokenizer, o200k_base) file by file: each file's
 * patch is kept whole or left out and named, so a large generated file cannot push every other
 * change out. Files are kept in git's order while they fit; smaller ones after a large one still can.
 */
export function diffForModel(patch: string, budget: number): BudgetedDiff {
  const files = patch.split(/^(?=diff --git )/m).filter((section) => section.trim() !== "");
  let left = budget;
  const kept: string[] = [];
  const omitted: string[] = [];
  for (const section of files) {
    // Tokens are rarely longer than a few dozen characters: a section this long is left out uncounted
    // (a huge minified line is slow to tokenise, and would not fit).
    const tokens = section.length <= left * MAX_CHARS_PER_TOKEN ? isWithinTokenLimit(section, left, AS_TEXT) : false;
    if (tokens === false) {
      omitted.push(fileOf(section));
      continue;
    }
    kept.push(section);
    left -= tokens;
  }
  const text = kept.join("").trimEnd();
  if (omitted.length === 0) return { text, omitted };
  const note = `[${omitted.length} file${omitted.length === 1 ? "" : "s"} left out to fit ${budget} tokens: ${omitted.join(", ")}]`;
  return { text: text ? `${text}\n${note}` : note, omitted };
}

/** `diff --git a/src/x.ts b/src/x.ts` → `src/x.ts` (the new name). */
function fileOf(section: string): string {
  const header = section.split("\n", 1)[0] ?? "";
  return / b\/(.+)$/.exec(header)?.[1] ?? header.replace(/^diff --git /, "");
}
