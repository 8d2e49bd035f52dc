/** What the map is asked to put first: the model's `focus`, and what a thread mentions. */
export interface Focus {
  /** As written (normalised), for the header. */
  terms: string[];
  /** Lower-cased, for case-insensitive matching. */
  keys: string[];
  dropped: number;
}

/** Identifiers and paths a thread (issue, comments, plan) mentions; they personalise the ranking quietly. */
export interface Mentions {
  identifiers: Set<string>;
  paths: Set<string>;
}

export const MAX_FOCUS_TERMS = 20;
const MAX_MENTIONS = 200;

/** A string may hold several terms, split on spaces or commas. */
export function focusTerms(focus: string | string[] | null | undefined): Focus {
  const raw = typeof focus === "string" ? focus.split(/[\s,]+/) : (focus ?? []);
  const byKey = new Map<string, string>();
  for (const entry of raw) {
    const term = entry
      .trim()
      .replaceAll("\\", "/")
      .replace(/^(?:\.\/|\/)+/, "")
      .replace(/(?:\/|\(\))+$/, "");
    if (term !== "" && term !== "." && !byKey.has(term.toLowerCase())) byKey.set(term.toLowerCase(), term);
  }
  const kept = [...byKey].slice(0, MAX_FOCUS_TERMS);
  return { terms: kept.map(([, term]) => term), keys: kept.map(([key]) => key), dropped: byKey.size - kept.length };
}

/**
 * The code-like words of a thread: identifiers that look like code (camelCase, snake_case, a
 * call or backticks) and paths with a slash or an extension. Plain English words are ignored, so
 * a thread about "the retry policy" does not tilt the map towards every `the`.
 */
export function threadMentions(text: string): Mentions {
  const identifiers = new Set<string>();
  const paths = new Set<string>();
  for (const match of text.matchAll(/[\w./-]+/g)) {
    const word = match[0].replace(/^[./]+|[.,:;/]+$/g, "");
    if (/^[\w-]+(?:\/[\w.-]+)+$|^[\w-]+\.[a-z]{1,5}$/.test(word) && !/^\d/.test(word)) paths.add(word);
    for (const part of word.split(/[./-]+/)) {
      if (/^[A-Za-z_$][\w$]{2,}$/.test(part) && /[a-z][A-Z]|[A-Za-z]_[A-Za-z]|^[A-Z][a-z]+[A-Z]/.test(part))
        identifiers.add(part);
    }
    if (identifiers.size + paths.size >= MAX_MENTIONS) break;
  }
  for (const match of text.matchAll(/`([A-Za-z_$][\w$]*)(?:\(\))?`/g)) if (match[1]) identifiers.add(match[1]);
  return { identifiers, paths };
}

export const noMentions = (): Mentions => ({ identifiers: new Set(), paths: new Set() });

/** How strongly a path matches a focus key: the path or a folder of it, its file name, part of it. */
export function pathMatch(file: string, key: string): "path" | "name" | "part" | undefined {
  const lower = file.toLowerCase();
  if (lower === key || lower.startsWith(`${key}/`)) return "path";
  const base = lower.slice(lower.lastIndexOf("/") + 1);
  if (base === key || base.replace(/\.[^.]*$/, "") === key) return "name";
  return lower.includes(key) ? "part" : undefined;
}
