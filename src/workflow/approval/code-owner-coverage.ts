import {
  CODEOWNERS_LOCATIONS,
  ownerLabel,
  ownersOf,
  parseCodeOwners,
  type CodeOwner,
  type CodeOwners,
} from "../../github/codeowners.js";
import { atLeast, type PermissionLevel } from "../../github/permission.js";
import { inlineCode } from "../../plan/render.js";
import { plainError } from "../plain-error.js";
import type { GitHubAccount, ThreadPort } from "../ports.js";
import type { RecordedApproval, ThreadState } from "../state.js";

/**
 * Which files need a code owner's approval, and whose approvals cover them. Shared by the check
 * before a build (the files a plan lists) and the check after each step (the files its commit changed).
 */

export interface FoundCodeOwners {
  path: string;
  codeowners: CodeOwners;
}

/** A file that has owners, with them. */
export interface OwnedFile {
  file: string;
  owners: CodeOwner[];
}

/** The default branch's CODEOWNERS, the first of GitHub's places that has one, or null. */
export async function readCodeOwners(read: (file: string) => Promise<string | null>): Promise<FoundCodeOwners | null> {
  for (const path of CODEOWNERS_LOCATIONS) {
    const text = await read(path);
    if (text !== null) return { path, codeowners: parseCodeOwners(text) };
  }
  return null;
}

/** The files that have owners (a file whose last matching rule names nobody has none), with their owners. */
export function ownedFiles(codeowners: CodeOwners, files: string[]): OwnedFile[] {
  return files.flatMap((file) => {
    const owners = ownersOf(codeowners, file);
    return owners && owners.length > 0 ? [{ file, owners }] : [];
  });
}

/** Everyone whose approval of this revision counts: each recorded approval, and the build's approver. */
export function approverLogins(state: Pick<ThreadState, "approvals" | "approvedBy">): string[] {
  const logins = [
    ...state.approvals.map((approval) => approval.login),
    ...(state.approvedBy ? [state.approvedBy] : []),
  ];
  return [...new Map(logins.map((login) => [login.toLowerCase(), login])).values()];
}

/** The owned files that none of `approvers` owns. */
export async function uncovered(owned: OwnedFile[], approvers: string[], matcher: OwnerMatcher): Promise<OwnedFile[]> {
  const missing: OwnedFile[] = [];
  for (const entry of owned) {
    let covered = false;
    for (const login of approvers) if (!covered && (await matcher.owns(login, entry.owners))) covered = true;
    if (!covered) missing.push(entry);
  }
  return missing;
}

const MAX_FILES_LISTED = 8;

/** "`src/a.js` (@alice, @org/team), `b.md` (docs@example.com), and 3 more". */
export function describeOwnedFiles(owned: OwnedFile[], max = MAX_FILES_LISTED): string {
  const files = owned
    .slice(0, max)
    .map(({ file, owners }) => `\`${inlineCode(file)}\` (${owners.map(ownerLabel).join(", ")})`);
  const more = owned.length > max ? `, and ${owned.length - max} more` : "";
  return `${files.join(", ")}${more}`;
}

/** "@docs-writer (`/build`), @alice (approving review)": the approvals recorded so far. */
export function describeApprovals(approvals: RecordedApproval[]): string {
  return approvals
    .map((approval) => `@${approval.login} (${approval.via === "build" ? "`/build`" : "approving review"})`)
    .join(", ");
}

export interface OwnerMatcher {
  /** Whether `login` is one of `owners`, with write access to the repository (as GitHub requires of a code owner). */
  owns(login: string, owners: CodeOwner[]): Promise<boolean>;
  /** What GitHub would not tell (counted as not owning), in words: "membership of @org/team (why)". */
  unchecked(): string[];
  /** Owners whose approval did not count for want of write access, in words: "@bob (read)". */
  withoutWrite(): string[];
}

/** What a refusal adds about the owners it could not count: access GitHub would not tell, or too little of it. */
export function matcherNotes(matcher: OwnerMatcher): string[] {
  const unchecked = matcher.unchecked();
  const withoutWrite = matcher.withoutWrite();
  return [
    ...(withoutWrite.length > 0
      ? [
          `As on GitHub, a code owner's approval counts only with write access to the repository, which ${withoutWrite.join(", ")} ${withoutWrite.length === 1 ? "does" : "do"} not have.`,
        ]
      : []),
    ...(unchecked.length > 0 ? [`Blueprint could not check ${unchecked.join("; ")}.`] : []),
  ];
}

/**
 * Matches people to owners: by login; through a team (GitHub asked once per team and person); by
 * e-mail, against what GitHub shows an App of the account: its public e-mail and its noreply
 * addresses. A private e-mail cannot be seen, so an owner named by one matches nobody. As on GitHub, an owner
 * counts only with write access to the repository (or more): one with less is named, not counted.
 */
export function ownerMatcher(port: ThreadPort): OwnerMatcher {
  const memberships = new Map<string, Promise<boolean>>();
  const accounts = new Map<string, Promise<GitHubAccount | null>>();
  const permissions = new Map<string, Promise<PermissionLevel | null>>();
  const failures = new Set<string>();
  const lacking = new Map<string, string>();
  const once = <T>(
    cache: Map<string, Promise<T>>,
    key: string,
    ask: () => Promise<T>,
    failed: T,
    what: string,
  ): Promise<T> => {
    let answer = cache.get(key.toLowerCase());
    if (!answer) {
      answer = ask().catch((error: unknown) => {
        failures.add(`${what} (${plainError(error)})`);
        return failed;
      });
      cache.set(key.toLowerCase(), answer);
    }
    return answer;
  };
  const named = async (login: string, owners: CodeOwner[]): Promise<boolean> => {
    for (const owner of owners) {
      if (owner.kind === "user" && owner.login.toLowerCase() === login.toLowerCase()) return true;
      if (
        owner.kind === "team" &&
        (await once(
          memberships,
          `${owner.org}/${owner.slug}:${login}`,
          () => port.teamMember(owner.org, owner.slug, login),
          false,
          `membership of @${owner.org}/${owner.slug}`,
        ))
      )
        return true;
      if (owner.kind === "email") {
        const account = await once(accounts, login, () => port.account(login), null, `@${login}'s public e-mail`);
        if (account && accountEmails(account).includes(owner.email.toLowerCase())) return true;
      }
    }
    return false;
  };
  const mayApprove = async (login: string): Promise<boolean> => {
    const what = `@${login}'s access to the repository`;
    // Null: GitHub would not tell (said in `unchecked`), counted as too little.
    const level = await once(permissions, login, () => port.permission(login), null, what);
    if (level !== null && atLeast(level, "write")) return true;
    if (level !== null) lacking.set(login.toLowerCase(), `@${login} (${level})`);
    return false;
  };
  return {
    owns: async (login, owners) => (await named(login, owners)) && (await mayApprove(login)),
    unchecked: () => [...failures],
    withoutWrite: () => [...lacking.values()],
  };
}

/**
 * The addresses that are certainly the account's: the public profile e-mail (GitHub shows only a
 * verified one) and the two noreply forms GitHub gives every account on github.com.
 */
export function accountEmails(account: GitHubAccount): string[] {
  const login = account.login.toLowerCase();
  return [
    `${account.id}+${login}@users.noreply.github.com`,
    `${login}@users.noreply.github.com`,
    ...(account.email ? [account.email.toLowerCase()] : []),
  ];
}
