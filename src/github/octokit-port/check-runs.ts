import type { CheckAnnotation, CheckRunOutput, CheckRunPort } from "../../workflow/ports.js";
import { sameCheckRun } from "../../shared/check-run.js";
import { failingChecks } from "./failing-checks.js";
import { unlessNotFound, type OwnCheckRunFacts, type ThreadScope } from "./scope.js";

/** GitHub takes at most 50 annotations per create or update request; more go in further updates. */
const ANNOTATIONS_PER_REQUEST = 50;
/** GitHub's limit on a check run's summary and text. */
const MAX_OUTPUT_CHARS = 65_535;

/** Check runs on the repository's commits: found by name and external id, read by id, created, updated. */
export function checkRuns(
  { octokit, where }: ThreadScope,
  {
    isOwnApp,
    buttons,
    isOwnRun,
  }: Pick<CheckRunPort, "isOwnApp" | "buttons"> & {
    isOwnRun?: ((run: OwnCheckRunFacts) => boolean) | undefined;
  },
): CheckRunPort {
  /** Whether the run is Blueprint's: by default, whether GitHub says this app made it (`app` null: no app did). */
  const ownRun =
    isOwnRun ?? ((run: OwnCheckRunFacts) => run.app !== null && isOwnApp({ id: run.app.id, slug: run.app.slug ?? "" }));
  const addRest = async (id: number, run: CheckRunOutput, rest: CheckAnnotation[]) => {
    for (let at = 0; at < rest.length; at += ANNOTATIONS_PER_REQUEST) {
      await octokit.rest.checks.update({
        ...where,
        check_run_id: id,
        output: runOutput(run, rest.slice(at, at + ANNOTATIONS_PER_REQUEST)),
      });
    }
  };
  return {
    async find(headSha, name, externalId) {
      const runs = await octokit.paginate(octokit.rest.checks.listForRef, {
        ...where,
        ref: headSha,
        check_name: name,
        filter: "all",
        per_page: 100,
      });
      const own = runs.find((run) => sameCheckRun(run.external_id, externalId) && ownRun(run));
      return own?.id ?? null;
    },
    async get(id) {
      const found = await unlessNotFound(octokit.rest.checks.get({ ...where, check_run_id: id }), null);
      if (!found) return null;
      const run = found.data;
      return {
        name: run.name,
        headSha: run.head_sha,
        externalId: run.external_id ?? null,
        conclusion: run.conclusion ?? null,
        own: ownRun(run),
      };
    },
    async create(run) {
      const annotations = run.annotations ?? [];
      const { data } = await octokit.rest.checks.create({
        ...where,
        name: run.name,
        head_sha: run.headSha,
        external_id: run.externalId,
        ...runFields(run),
        output: runOutput(run, annotations.slice(0, ANNOTATIONS_PER_REQUEST)),
      });
      await addRest(data.id, run, annotations.slice(ANNOTATIONS_PER_REQUEST));
      return data.id;
    },
    async update(id, run) {
      const annotations = run.annotations ?? [];
      await octokit.rest.checks.update({
        ...where,
        check_run_id: id,
        ...runFields(run),
        output: runOutput(run, annotations.slice(0, ANNOTATIONS_PER_REQUEST)),
      });
      await addRest(id, run, annotations.slice(ANNOTATIONS_PER_REQUEST));
    },
    failures: (headSha) => failingChecks({ octokit, where }, headSha, ownRun),
    isOwnApp,
    buttons,
  };
}

/** A check run's output for GitHub, with these annotations (at most one request's worth). */
function runOutput(run: CheckRunOutput, annotations: CheckAnnotation[]) {
  return {
    title: run.title,
    summary: clip(run.summary),
    ...(run.text ? { text: clip(run.text) } : {}),
    ...(annotations.length > 0
      ? {
          annotations: annotations.map((note) => ({
            path: note.path,
            start_line: note.line,
            end_line: note.line,
            annotation_level: note.level,
            message: note.message,
            ...(note.title ? { title: note.title } : {}),
          })),
        }
      : {}),
  };
}

/** A check run's status, conclusion (completed now, when there is one) and buttons, for GitHub. */
function runFields(run: CheckRunOutput) {
  return {
    status: run.status,
    ...(run.conclusion ? { conclusion: run.conclusion, completed_at: new Date().toISOString() } : {}),
    ...(run.actions ? { actions: run.actions } : {}),
  };
}

function clip(text: string): string {
  return text.length <= MAX_OUTPUT_CHARS
    ? text
    : `${text.slice(0, MAX_OUTPUT_CHARS - 40)}\n\n… (cut to GitHub's limit)`;
}
