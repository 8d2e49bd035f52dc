import { withState } from "../../github/plan-comment.js";
import { commentSeal, threadSeal } from "../../github/state-marker.js";
import type { Plan } from "../../plan/schema.js";
import { handedOver } from "../../shared/hand-over.js";
import type { Workspace } from "../../workspace/workspace.js";
import { BuildCheck } from "../build/index.js";
import { openBuildNetwork } from "../build/index.js";
import { openBuildLedger, type BuildLedger } from "../build/index.js";
import { describeChecks } from "../build/index.js";
import { failedChecks, sandboxNotes } from "../build/index.js";
import type { BuildRun } from "../build/index.js";
import { buildStatus, planCommentRenderer, type BuildStatus } from "../build/index.js";
import { Cancelled, verify } from "../build/index.js";
import { buildSteps } from "../build/index.js";
import { whyStopped } from "../build/index.js";
import { planRevisionTrailer } from "../build/index.js";
import { addUsage, renderRunCost } from "../cost.js";
import { ThreadLabels } from "../surfaces/index.js";
import type { FollowUpStep } from "../state.js";
import { answerThreads } from "./replies.js";
import type { FollowUpRun } from "./request.js";
import { asPlanStep, withFollowUpSteps } from "../../github/follow-up-section.js";
import { applyStepSuggestions } from "./suggestion-step.js";

/**
 * Builds the F-steps not done yet on the pull request's branch: suggestions as written, then one agent run, commit
 * and push per step with the build's rules (build-steps.ts), verification, and a reply in each thread.
 */
export async function buildFollowUp(run: FollowUpRun): Promise<void> {
  const { deps, job, state, followUp, source } = run;
  const notes = sandboxNotes(deps.runner.isolation);
  const status = followUpStatus(run);
  const existing = await source.mirror.resolve(`refs/heads/${source.target.branch}`);
  if (!existing) throw new Error(`the branch \`${source.target.branch}\` is gone, so there is nothing to follow up on`);
  const tree = await source.mirror.checkout(existing);
  let ledger: BuildLedger | null = null;
  let check: BuildCheck | null = null;
  let report: string | undefined;
  try {
    state.status = "building";
    followUp.status = "building";
    followUp.error = null;
    await status.save(`> ⏳ **Following up on #${followUp.pullRequest}…**`);
    // 1. Suggestions as written, in a commit of their own; those that no longer apply become steps for the model.
    await applyStepSuggestions(run, tree, notes);
    const plan = withFollowUpSteps(run.plan, followUp);
    ledger = openBuildLedger(deps, source.config, { plan, state, notes, earlier: run.earlier });
    check = new BuildCheck(job.port, deps.log, plan, state);
    await check.start();
    // 2. The rest, one agent run each.
    const todo = followUp.steps.filter((step) => step.kind === "model" && state.steps[step.id]?.status !== "done");
    report = await buildModelSteps(run, { tree, plan, ledger, check, status, todo, notes });
  } catch (error) {
    stopped(run, error);
    report = ledger?.report();
  } finally {
    await ledger?.network?.close();
    await tree.dispose().catch((error) => deps.log.warn({ err: error }, "could not remove a workspace"));
  }
  // 3. Handed to another worker (a restart): not over, so the job, run again, goes on from here (`paused`).
  if (handedOver(job.signal)) {
    followUp.status = "pending";
    followUp.error = null;
    followUp.paused = run.handled;
    await status.save(
      "> ⏸ **Paused at a safe point:** Blueprint is restarting; another worker goes on with the follow-up.",
    );
    return;
  }
  // 4. Each thread hears what became of it; the plan comment and the build check say how it ended.
  await answerThreads(run);
  await status.save(finalStatusLine(run), report);
  if (check) await check.finish(null, false);
}

interface ModelSteps {
  tree: Workspace;
  plan: Plan;
  ledger: BuildLedger;
  check: BuildCheck;
  status: BuildStatus;
  todo: FollowUpStep[];
  notes: string[];
}

/** The report the plan comment shows once the steps are built (or stopped). */
async function buildModelSteps(run: FollowUpRun, steps: ModelSteps): Promise<string> {
  const { deps, job, state, followUp, source, record } = run;
  const { tree, plan, ledger, check, status, todo, notes } = steps;
  const buildRun: BuildRun = {
    deps,
    job,
    request: { approval: followUpApproval(run), fresh: false },
    info: source.info,
    mirror: source.mirror,
    config: source.config,
    planComment: record.comment,
    state,
    plan,
    notes,
    unticked: [],
    status: {
      save: async (line, report) => (await status.save(line, report), await check.follow()),
      showRetry: status.showRetry,
    },
    target: source.target,
    check,
    followUp: true,
  };
  const revision = planRevisionTrailer(record.comment.id, state.revision);
  const built =
    todo.length === 0 ? null : await buildSteps(buildRun, ledger, { tree, todo: todo.map(asPlanStep), revision });
  addUsage(followUp.usage, ledger.usage);
  followUp.cost = renderRunCost(followUp.usage, ledger.pricing);
  if (built && !built.done) {
    // A step not done stops the follow-up where a build stops; the plan itself stays built.
    followUp.status = "failed";
    followUp.error = state.error;
    state.status = "built";
    state.error = null;
    return ledger.report();
  }
  const verification = await verify(
    deps,
    tree,
    plan,
    source.config,
    built?.network ?? (await noNetwork(run, ledger)),
    job.signal,
    Date.now() + ledger.maxWallTimeMs,
  );
  check.verified(verification, tree.dir);
  const failed = failedChecks(verification);
  state.status = "built";
  state.error = failed.length > 0 ? `verification failed: ${describeChecks(failed)}` : null;
  followUp.status = "built";
  return ledger.report(verification);
}

/** Only suggestions: verification still runs, on the build's network (opened for it). */
async function noNetwork(run: FollowUpRun, ledger: BuildLedger) {
  ledger.network = await openBuildNetwork(run.deps, run.source.config, []);
  return ledger.network;
}

/** The review (or `/fix`) is the approval of its F-steps: it is recorded, so code owners' approvals count for them. */
function followUpApproval(run: FollowUpRun) {
  return {
    approver: run.job.actor,
    revision: run.state.revision,
    steps: [],
    force: true,
    permitted: true,
    minimumPermission: run.deps.minPermission,
  };
}

function stopped(run: FollowUpRun, error: unknown): void {
  const { state, followUp, job, deps } = run;
  const cancelled = error instanceof Cancelled || job.signal.aborted;
  for (const step of followUp.steps)
    if (state.steps[step.id]?.status === "building") state.steps[step.id] = { status: "pending" };
  followUp.status = cancelled ? "cancelled" : "failed";
  followUp.error = whyStopped(error, job.signal);
  state.status = "built";
  state.error = null;
  if (!cancelled) deps.log.error({ err: error, deliveryId: job.deliveryId }, "follow-up failed");
}

function finalStatusLine(run: FollowUpRun): string {
  const { followUp, state } = run;
  const ids = followUp.steps.filter((step) => state.steps[step.id]?.status === "done").map((step) => step.id);
  switch (followUp.status) {
    case "built":
      return state.error
        ? `> ⚠️ **Followed up on #${followUp.pullRequest}, but ${state.error}**`
        : `> 🎉 **Built, and followed up on #${followUp.pullRequest}**${ids.length > 0 ? ` (${ids.join(", ")})` : ""}.`;
    case "cancelled":
      return `> ⏹️ **Follow-up stopped:** ${followUp.error ?? "cancelled"}. Everything already pushed stays; \`/fix\` on #${followUp.pullRequest} goes on.`;
    default:
      return `> ❌ **Follow-up stopped:** ${followUp.error ?? "see the report below"}. Everything already pushed stays; \`/fix\` on #${followUp.pullRequest} goes on from the first F-step not done.`;
  }
}

/** The state saved with nothing people see changed: what was handled, so that a redelivery does nothing twice. */
export async function saveHandled(run: Pick<FollowUpRun, "deps" | "job" | "record" | "state">): Promise<void> {
  const { port } = run.job;
  const seal = commentSeal(threadSeal(run.deps.stateKey, port), run.record.comment.id);
  // The comment as it reads now: a follow-up may have written it since it was read.
  const body = (await port.comment(run.record.comment.id))?.body ?? run.record.comment.body;
  await port.updateComment(run.record.comment.id, withState(body, run.state, seal));
}

/**
 * F-steps saved in the plan comment, unbuilt, until `/fix` builds them; `because` says why they wait: the setting
 * (`follow_up: plan`, `ci_fix: suggest`) or why Blueprint stopped building fixes by itself.
 */
export async function savePlanned(run: FollowUpRun, because: string): Promise<void> {
  const waiting = run.followUp.steps
    .filter((step) => run.state.steps[step.id]?.status !== "done")
    .map((step) => step.id);
  await followUpStatus(run).save(
    `> 🎉 **Built.** Follow-up on #${run.followUp.pullRequest}: ${waiting.join(", ")} ${waiting.length === 1 ? "waits" : "wait"} for \`/fix\` (${because}).`,
  );
}

/** The plan comment is the follow-up's status comment, and the thread's label follows it. */
function followUpStatus(run: FollowUpRun): BuildStatus {
  const { deps, job, record, state, source } = run;
  const labels = new ThreadLabels(job.port, source.config, deps.log, job.deliveryId);
  const seal = commentSeal(threadSeal(deps.stateKey, job.port), record.comment.id);
  return buildStatus(deps, job, record.comment, planCommentRenderer(deps, state, seal), () => labels.follow(state));
}
