/** A failure to reach or update the repository, worded for the issue thread. */
export class WorkspaceError extends Error {}

export function describeGitError(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const line =
    text
      .split("\n")
      .map((l) => l.trim())
      .find((l) => /^(fatal|error|remote):/i.test(l)) ??
    text.split("\n")[0] ??
    text;
  return line.replace(/Authorization: \S+ \S+/g, "Authorization: [redacted]");
}
