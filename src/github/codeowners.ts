/**
 * GitHub's CODEOWNERS: gitignore-style patterns with owners, the last matching line winning.
 * What GitHub documents as not working (`!` negation, `[ ]` ranges, `\#` escapes) makes a line
 * invalid; GitHub skips such lines, and so does this parser (it lists them in `errors`).
 */

import { pathMatcher } from "../shared/path-glob.js";

/** Where GitHub looks, in its order; the first file found is the one that counts. */
export const CODEOWNERS_LOCATIONS = [".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"] as const;

export type CodeOwner =
  { kind: "user"; login: string } | { kind: "team"; org: string; slug: string } | { kind: "email"; email: string };

export interface CodeOwnersRule {
  pattern: string;
  /** Empty: the files matched have no owner (a later rule can clear an earlier one's owners). */
  owners: CodeOwner[];
  line: number;
  matches(path: string): boolean;
}

export interface CodeOwners {
  rules: CodeOwnersRule[];
  errors: Array<{ line: number; message: string }>;
}

export function parseCodeOwners(text: string): CodeOwners {
  const rules: CodeOwnersRule[] = [];
  const errors: CodeOwners["errors"] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = index + 1;
    const content = raw.replace(/(^|\s)#.*$/, "").trim();
    if (content === "" || raw.trimStart().startsWith("#")) return;
    const [pattern = "", ...entries] = content.split(/\s+/);
    const problem = unsupported(pattern);
    if (problem) {
      errors.push({ line, message: problem });
      return;
    }
    const owners = entries.map(parseOwner);
    const bad = entries.find((_, i) => owners[i] === null);
    if (bad !== undefined) {
      errors.push({ line, message: `\`${bad}\` is not an owner (use @user, @org/team or an email address)` });
      return;
    }
    rules.push({
      pattern,
      owners: owners.filter((owner): owner is CodeOwner => owner !== null),
      line,
      matches: pathMatcher(pattern),
    });
  });
  return { rules, errors };
}

/** The owners of a file: null when no rule matches it, [] when the last matching rule names none. */
export function ownersOf(codeowners: CodeOwners, path: string): CodeOwner[] | null {
  const file = path.replace(/^\/+/, "");
  for (let i = codeowners.rules.length - 1; i >= 0; i--) {
    const rule = codeowners.rules[i];
    if (rule?.matches(file)) return rule.owners;
  }
  return null;
}

/** How GitHub writes an owner: `@login`, `@org/team` or the email address. */
export function ownerLabel(owner: CodeOwner): string {
  switch (owner.kind) {
    case "user":
      return `@${owner.login}`;
    case "team":
      return `@${owner.org}/${owner.slug}`;
    case "email":
      return owner.email;
  }
}

function unsupported(pattern: string): string | null {
  if (pattern.startsWith("!")) return "`!` (negation) does not work in CODEOWNERS";
  if (/[[\]]/.test(pattern)) return "`[ ]` (character ranges) do not work in CODEOWNERS";
  if (pattern.startsWith("\\#")) return "escaping a leading `#` does not work in CODEOWNERS";
  if (pattern.includes("***")) return "a pattern cannot contain three asterisks in a row";
  if (pattern === "/") return "`/` alone matches nothing";
  return null;
}

function parseOwner(entry: string): CodeOwner | null {
  const team = /^@([A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)\/([A-Za-z0-9._-]+)$/.exec(entry);
  if (team?.[1] && team[2]) return { kind: "team", org: team[1], slug: team[2].toLowerCase() };
  const user = /^@([A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\[bot\])?)$/.exec(entry);
  if (user?.[1]) return { kind: "user", login: user[1] };
  if (/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(entry)) return { kind: "email", email: entry };
  return null;
}
