/**
 * The issue a build branch was made for, whatever the repository's prefix (`blueprint/`, `bp-`): `<prefix>issue-<n>`;
 * null for any other branch.
 */
export function issueOfBuildBranch(ref: string): number | null {
  const issue = /issue-([1-9][0-9]*)$/.exec(ref)?.[1];
  return issue ? Number(issue) : null;
}
