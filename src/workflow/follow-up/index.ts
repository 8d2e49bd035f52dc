import { findThreadState } from "../../github/plan-comment.js";
import { threadSeal } from "../../github/state-marker.js";
import type { JobContext, WorkflowDeps } from "../deps.js";
import { trustChecker } from "../thread-context.js";
import type { FollowUpState, ThreadState } from "../state.js";
import { builtPlan, followUpSource } from "./admission.js";
import { handledKey, newFollowUp, type FollowUpRequest, type FollowUpRun } from "./request.js";
import { answerThreads } from "./replies.js";
import { buildFollowUp, saveHandled, savePlanned } from "./run.js";
import { suggestionOf } from "./suggestions.js";
import { notesContext, notesStep, threadStep, threadsToFollow, type ThreadWork } from "./threads.js";

export type { FollowUpRequest } from "./request.js";
export { followUpHome } from "./home.js";
export { reviewCommentsOf } from "./review-comments.js";
export { followFailingChecks } from "./failing-checks.js";

/**
 * A review or `/fix` on the pull request of a built plan: its unresolved review threads (and the review's body or the
 * notes) become fix-up steps F1, F2, … on the same branch. Answers `not-built` when the plan is not built yet, so that a
 * review revises it as before.
 */
export async function followUpThread(
  deps: WorkflowDeps,
  job: JobContext,
  request: FollowUpRequest,
): Promise<"followed" | "not-built"> {
  // 1. The plan this pull request follows, built; a review or `/fix` handled once.
  const plan = await builtPlan(deps, job, request);
  if (plan.ok === "not-built") {
    if (request.commentId === null) return "not-built";
    await say(job, request, "The plan is not built yet: comment `/build` to build it; `/fix` follows up once it is.");
    return "followed";
  }
  if (!plan.ok) return await refuse(job, request, plan.why);
  const { record } = plan;
  const key = handledKey(request);
  const resumed = record.state.followUp?.paused === key;
  if ((record.state.followUp?.handled.includes(key) && !resumed) || !record.state.plan) return "followed";

  // 2. The review as GitHub has it now, the repository's settings, the branch.
  const admitted = await followUpSource(deps, job, request, record);
  if (!admitted.ok) return await refuse(job, request, admitted.why);
  const { source } = admitted;

  // 3. The threads to take up, and the F-steps they make.
  const state: ThreadState = structuredClone(record.state);
  const followUp: FollowUpState = state.followUp ?? newFollowUp(request.pullRequest);
  state.followUp = followUp;
  const work = await threadsToFollow(
    job.port.reviews ? await job.port.reviews.threads(request.pullRequest) : [],
    followUp,
    trustChecker(job.port, deps.minPermission),
  );
  // A follow-up a restart paused goes on with its steps; it has them already.
  if (!resumed) {
    addSteps(followUp, work, job.actor, request);
    followUp.handled.push(key);
  }
  followUp.paused = null;
  const run: FollowUpRun = {
    ...{ deps, job, request, record, source, state, followUp, plan: record.state.plan },
    work: new Map(work.map((item) => [item.thread.id, item])),
    handled: key,
  };
  const todo = followUp.steps.filter((step) => state.steps[step.id]?.status !== "done");
  if (todo.length === 0) {
    // Recorded all the same: the same review, delivered again, is not looked at again.
    await saveHandled(run);
    await say(job, request, "Nothing to follow up: no unresolved review thread is new, and no notes came with `/fix`.");
    return "followed";
  }
  state.approvals.push({
    login: job.actor,
    via: request.reviewId !== null ? "review" : "build",
    at: new Date().toISOString(),
  });

  // 4. `follow_up: plan` posts the steps and waits for `/fix`; `build` (the default) builds them now.
  if (source.config.follow_up === "plan" && request.commentId === null) {
    await postPlanned(run);
    return "followed";
  }
  await buildFollowUp(run);
  return "followed";
}

/**
 * `/build` on the thread of a built plan whose Follow-up has steps waiting (`follow_up: plan`, `ci_fix: suggest`)
 * builds them, as `/fix` does; false when there are none, and `/build` is answered as before.
 */
export async function buildWaitingFollowUp(
  deps: WorkflowDeps,
  job: JobContext,
  command: { commentId: number; steps: string[]; notes: string },
): Promise<boolean> {
  if (command.steps.length > 0) return false;
  const lookup = findThreadState(await job.port.comments(), threadSeal(deps.stateKey, job.port));
  const state = lookup.kind === "found" ? lookup.plan?.state : null;
  const followUp = state?.status === "built" ? state.followUp : null;
  if (!state || !followUp || followUp.steps.every((step) => state.steps[step.id]?.status === "done")) return false;
  const request = {
    pullRequest: followUp.pullRequest,
    commentId: command.commentId,
    reviewId: null,
    reviewState: null,
  };
  await followUpThread(deps, job, { ...request, text: command.notes });
  return true;
}

/**
 * Suggestions (a thread whose only comment suggests) go into one step applied without the model; every other thread is
 * a step of its own; words without threads are one step.
 */
function addSteps(followUp: FollowUpState, work: ThreadWork[], actor: string, request: FollowUpRequest): void {
  const next = () => `F${followUp.steps.length + 1}`;
  const source = request.reviewId !== null ? "Review" : "`/fix`";
  const fresh = work.filter((item) => !item.planned);
  const suggested = fresh.filter((item) => item.people.length === 1 && suggestionOf(item.thread));
  if (suggested.length > 0) {
    const id = next();
    const count = `${suggested.length} review suggestion${suggested.length === 1 ? "" : "s"}`;
    const threads = suggested.map((item) => item.thread.id);
    const files = [...new Set(suggested.map((item) => item.thread.path))];
    followUp.steps.push({ id, title: `Apply ${count}`, details: "", files, deps: [], threads, kind: "suggestion" });
    for (const item of suggested)
      followUp.threads[item.thread.id] = { lastComment: item.newest, step: id, outcome: "pending" };
  }
  const context = notesContext(actor, request.reviewId !== null ? "Review summary" : "Notes with `/fix`", request.text);
  for (const item of fresh.filter((candidate) => !suggested.includes(candidate))) {
    const id = next();
    followUp.steps.push(threadStep(id, item, context));
    followUp.threads[item.thread.id] = { lastComment: item.newest, step: id, outcome: "pending" };
  }
  if (work.length === 0 && request.text.trim()) followUp.steps.push(notesStep(next(), actor, source, request.text));
}

/** `follow_up: plan`: the F-steps in the plan comment, unbuilt, and each thread told what waits for `/fix`. */
async function postPlanned(run: FollowUpRun): Promise<void> {
  run.followUp.status = "pending";
  await savePlanned(run, "`follow_up: plan`");
  await answerThreads(run, "new");
}

/** Only `/fix` is answered when a follow-up starts nothing; a review that starts nothing gets no word. */
async function refuse(job: JobContext, request: FollowUpRequest, why: string | null): Promise<"followed"> {
  if (why) await say(job, request, why);
  return "followed";
}

async function say(job: JobContext, request: FollowUpRequest, text: string): Promise<void> {
  if (request.commentId === null) return;
  const { reviews } = job.port;
  await (reviews ? reviews.comment(request.pullRequest, text) : job.port.postComment(text));
}
