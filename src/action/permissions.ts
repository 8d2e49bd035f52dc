import type { CheckRunPort } from "../workflow/ports.js";

// A checks follow-up reads what the workflow's `permissions:` may not grant: check runs (`checks: read`, in
// `checks: write`) and Actions jobs' logs (`actions: read`). GitHub answers 403 without them; the Action says which
// line to add rather than GitHub's "Resource not accessible by integration".

/** The reads a checks follow-up makes, and the permission each needs. */
const READS = [
  { path: /\/commits\/[^/]+\/check-runs(?:\?|$)/, what: "list the commit's check runs", permission: "checks: read" },
  {
    path: /\/check-runs\/[^/]+\/annotations(?:\?|$)/,
    what: "read check runs' annotations",
    permission: "checks: read",
  },
  { path: /\/actions\/jobs\/[^/]+\/logs(?:\?|$)/, what: "read GitHub Actions jobs' logs", permission: "actions: read" },
] as const;

/**
 * Records the requests GitHub refused (403, not a rate limit) that were one of those reads; `advice` is what the log
 * and the job summary say for each, once.
 */
export function refusedReads(): { record(error: unknown, url: string): void; advice(): string[] } {
  const lines = new Set<string>();
  return {
    record(error, url) {
      const read = isRefusal(error) ? READS.find((candidate) => candidate.path.test(url)) : undefined;
      if (read)
        lines.add(
          `GitHub refused (403) to ${read.what} with the workflow's token: add \`${read.permission}\` under the workflow's \`permissions:\`.`,
        );
    },
    advice: () => [...lines],
  };
}

/**
 * The check-run port whose failing-checks read, refused, says which permission to add: the words the thread and the
 * failed step show.
 */
export function explainRefusedChecks(checks: CheckRunPort | null): CheckRunPort | null {
  if (!checks) return null;
  return {
    ...checks,
    failures: (headSha) =>
      checks.failures(headSha).catch((error: unknown) => {
        if (!isRefusal(error)) throw error;
        throw new Error(
          `GitHub refused (403) to list the check runs of commit ${headSha.slice(0, 7)}: the workflow's token needs \`checks: read\` (add it under the workflow's \`permissions:\`; \`checks: write\` includes it)`,
          { cause: error },
        );
      }),
  };
}

function isRefusal(error: unknown): boolean {
  const { status, message } = error as { status?: number; message?: string };
  return status === 403 && !/rate limit/i.test(message ?? "");
}
