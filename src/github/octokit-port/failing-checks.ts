import type { FailingCheck } from "../../workflow/ports.js";
import type { OwnCheckRunFacts, ThreadScope } from "./scope.js";

/** The most of a job's log kept: its end, where a failing step's output is. */
const LOG_TAIL_CHARS = 12_000;
const LOG_TAIL_LINES = 150;
/** Annotations read per failing check (one page). */
const ANNOTATIONS = 50;

/**
 * A commit's failed check runs with what they say. A GitHub Actions job's log comes from the logs endpoint, which
 * answers with a redirect to a short-lived URL (fetch follows it); only its end is kept.
 */
export async function failingChecks(
  { octokit, where }: Pick<ThreadScope, "octokit" | "where">,
  headSha: string,
  ownRun: (run: OwnCheckRunFacts) => boolean,
): Promise<FailingCheck[]> {
  const runs = await octokit.paginate(octokit.rest.checks.listForRef, {
    ...where,
    ref: headSha,
    filter: "latest",
    per_page: 100,
  });
  const failed = runs.filter((run) => run.conclusion === "failure" || run.conclusion === "timed_out");
  return Promise.all(
    failed.map(async (run): Promise<FailingCheck> => {
      const own = ownRun(run);
      const annotations = own
        ? []
        : (
            await octokit.rest.checks
              .listAnnotations({ ...where, check_run_id: run.id, per_page: ANNOTATIONS })
              .catch(() => ({ data: [] }))
          ).data.map((note) => ({
            path: note.path,
            line: note.start_line,
            title: note.title ?? null,
            message: note.message ?? "",
          }));
      const logTail = !own && run.app?.slug === "github-actions" ? await jobLogTail({ octokit, where }, run.id) : null;
      return {
        id: run.id,
        name: run.name,
        own,
        title: run.output.title ?? "",
        summary: run.output.summary ?? "",
        annotations,
        logTail,
      };
    }),
  );
}

/** An Actions job's check run id is its job id. Null when the log cannot be read (expired, no `actions: read`). */
async function jobLogTail({ octokit, where }: Pick<ThreadScope, "octokit" | "where">, jobId: number) {
  try {
    const { data } = await octokit.rest.actions.downloadJobLogsForWorkflowRun({ ...where, job_id: jobId });
    const text = typeof data === "string" ? data : String(data);
    return text.split("\n").slice(-LOG_TAIL_LINES).join("\n").slice(-LOG_TAIL_CHARS);
  } catch {
    return null;
  }
}
