import { PLAN_TRAILER, planRevisionTrailer } from "../build/index.js";
import { writtenFilesApproval } from "../approval/index.js";
import type { Workspace } from "../../workspace/workspace.js";
import type { FollowUpRun } from "./request.js";
import { asPlanStep, withFollowUpSteps } from "../../github/follow-up-section.js";
import { applySuggestions, suggestionOf, type Suggestion } from "./suggestions.js";
import { threadPlace, threadStep } from "./threads.js";

/**
 * The suggestion step (there is at most one not done): each suggestion applied as written, all in one commit of its
 * own (`F1: Apply review suggestions`), checked for code owners like any step and pushed. A suggestion that no longer
 * applies becomes a step for the model, with its thread.
 */
export async function applyStepSuggestions(run: FollowUpRun, tree: Workspace, notes: string[]): Promise<void> {
  const { deps, job, state, followUp, source, record } = run;
  const step = followUp.steps.find(
    (candidate) => candidate.kind === "suggestion" && state.steps[candidate.id]?.status !== "done",
  );
  if (!step) return;
  const suggestions = step.threads.flatMap((id) => {
    const work = run.work.get(id);
    const suggestion = work ? suggestionOf(work.thread) : null;
    return suggestion ? [suggestion] : [];
  });
  const { applied, stale } = await applySuggestions(tree.dir, suggestions);
  for (const suggestion of [...stale, ...missing(step.threads, suggestions, run)])
    handToModel(run, step.id, suggestion);
  step.threads = applied.map((suggestion) => suggestion.thread.id);
  const commit = await tree.commitAll(
    `${step.id}: ${step.title}\n\nApplied as written:\n${applied.map((s) => `- ${threadPlace(s.thread)}`).join("\n")}\n\n${PLAN_TRAILER}: ${planRevisionTrailer(record.comment.id, state.revision)}`,
    source.config.commit_author ?? deps.identity,
  );
  if (!commit) {
    state.steps[step.id] = {
      status: "done",
      summary: "No suggestion still applied: each went to the model with its thread.",
    };
    return;
  }
  const written = await writtenFilesApproval({
    port: job.port,
    config: source.config,
    plan: withFollowUpSteps(run.plan, followUp),
    state,
    mirror: source.mirror,
    tree,
    planCommentId: record.comment.id,
    notes,
  });
  const usage = { prompt: 0, completion: 0, cached: 0, requests: 0 };
  const verdict = await written.check(asPlanStep(step), commit, usage);
  if (verdict.held) {
    await job.port.postComment(deps.redact(verdict.held.comment));
    throw new Error(`${step.id} changes files whose code owners have not approved: see the comment about it`);
  }
  await tree.push(source.target.branch, await job.port.gitToken());
  if (state.head) state.head.sha = commit.sha;
  state.steps[step.id] = { status: "done", commit: commit.sha, commitUrl: job.port.commitUrl(commit.sha), usage };
}

/** Threads of the step whose suggestion cannot be read any more (edited since): the model reads them. */
function missing(threads: string[], suggestions: Suggestion[], run: FollowUpRun): Suggestion[] {
  return threads
    .filter((id) => !suggestions.some((suggestion) => suggestion.thread.id === id))
    .flatMap((id) => {
      const work = run.work.get(id);
      return work ? [{ thread: work.thread, path: work.thread.path, start: 0, end: 0, replacement: "" }] : [];
    });
}

/** A suggestion that no longer applies goes to the model with its thread, as a step of its own. */
function handToModel(run: FollowUpRun, from: string, suggestion: Suggestion): void {
  const work = run.work.get(suggestion.thread.id);
  if (!work) return;
  const id = `F${run.followUp.steps.length + 1}`;
  const step = threadStep(
    id,
    work,
    `A reviewer suggested a change here (see the suggestion block above); it no longer applies to the file as it is, so ${from} could not apply it as written. Make the change it means.`,
  );
  run.followUp.steps.push(step);
  run.followUp.threads[suggestion.thread.id] = { lastComment: work.newest, step: id, outcome: "pending" };
}
