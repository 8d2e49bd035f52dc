import { withDependencies, buildOrder } from "../../plan/order.js";
import type { Plan } from "../../plan/schema.js";
import type { JobNetwork } from "../../workspace/egress-proxy.js";
import type { Workspace } from "../../workspace/workspace.js";
import type { BuildRun } from "./request.js";
import { openBuildLedger, type BuildLedger } from "./ledger.js";
import { describeChecks, handOver } from "./outcome.js";
import { failedChecks } from "./report.js";
import { Cancelled, verify } from "./step.js";
import { buildSteps, type StepsToBuild } from "./steps.js";
import { planRevisionTrailer, PLAN_TRAILER, recoverPushedSteps } from "./target.js";
import { addUsage } from "../cost.js";
import { doneSteps } from "./done-steps.js";
import { handedOver } from "../../shared/hand-over.js";
import { plainError } from "../plain-error.js";
import { fillPullRequestTemplate } from "./pr-template.js";

/**
 * Builds the wanted steps on a worktree, verifies them and hands the work over; every ending is saved in the plan
 * comment.
 */
export async function runBuild(run: BuildRun): Promise<void> {
  // 1. Which steps: all not done, or the named ones and what they need.
  const { plan, request } = run;
  const wanted = request.approval.steps.length > 0 ? withDependencies(plan, request.approval.steps) : buildOrder(plan);
  const ledger = openBuildLedger(run.deps, run.config, run);
  let workspace: Workspace | null = null;
  try {
    // 2. A worktree at the branch tip if it exists (resume), else at the recorded base.
    const existing = await run.mirror.resolve(`refs/heads/${run.target.branch}`);
    const tree = await run.mirror.checkout(existing ?? (run.state.head?.sha || run.state.base.sha));
    workspace = tree;
    const steps = await startSteps(run, tree, existing, wanted);
    // 3. One agent run, one commit, one push, one tick per step.
    const built = await buildSteps(run, ledger, steps);
    if (!built.done) return;
    // 4. Verification, and the work handed over.
    await verifyAndHandOver(run, ledger, tree, built.network);
  } catch (error) {
    await stopBuild(run, ledger, error);
  } finally {
    await ledger.network?.close();
    await workspace?.dispose().catch((error) => run.deps.log.warn({ err: error }, "could not remove a workspace"));
  }
}

/**
 * The build starts: steps already pushed count as done, the rest are to build (the status comment says which is first).
 */
async function startSteps(
  run: BuildRun,
  tree: Workspace,
  existing: string | null,
  wanted: Plan["steps"],
): Promise<StepsToBuild> {
  const { state, plan, notes } = run;
  state.status = "building";
  state.branch = run.target.branch;
  state.error = null;
  const revision = planRevisionTrailer(run.planComment.id, state.revision);
  if (existing && existing !== state.base.sha && !state.head) {
    recoverPushedSteps(state, plan, await tree.commitsBetween(state.base.sha, existing, PLAN_TRAILER), {
      revision,
      unticked: run.unticked,
      commitUrl: (sha) => run.job.port.commitUrl(sha),
    });
  }
  const todo = wanted.filter((step) => state.steps[step.id]?.status !== "done");
  const skipped = wanted.filter((step) => state.steps[step.id]?.status === "done").map((step) => step.id);
  if (skipped.length > 0) notes.push(`Already done, skipped: ${skipped.join(", ")}.`);
  await run.status.save(`> ⏳ **Building ${todo[0]?.id ?? "…"} (1 of ${todo.length})…**`);
  return { tree, todo, revision };
}

/**
 * Verification: the plan's commands and the repository's test command, within the wall-time limit.
 * Then the work is handed over: a pull request for an issue (a draft while checks fail), a report on a pull request.
 */
async function verifyAndHandOver(
  run: BuildRun,
  ledger: BuildLedger,
  tree: Workspace,
  network: JobNetwork,
): Promise<void> {
  const { deps, job, plan, state, config, target } = run;
  const verification = await verify(deps, tree, plan, config, network, job.signal, Date.now() + ledger.maxWallTimeMs);
  const allDone = plan.steps.every((step) => state.steps[step.id]?.status === "done");
  state.status = allDone ? "built" : "pending";
  const failed = failedChecks(verification);
  run.check?.verified(verification, tree.dir);
  state.error = failed.length > 0 ? `verification failed: ${describeChecks(failed)}` : null;
  // The pull request's description follows the repository's template when it has one.
  const description =
    target.kind === "issue-branch"
      ? await fillPullRequestTemplate(deps, job, {
          tree,
          plan,
          config,
          baseSha: state.base.sha,
          verification,
          done: await doneSteps(plan.steps, state, tree),
        })
      : null;
  if (description) addUsage(ledger.usage, description.usage);
  const report = ledger.report(verification);
  await run.status.save(
    await handOver(deps, job.port, {
      target,
      info: run.info,
      plan,
      state,
      verification,
      report,
      description: description?.text,
    }),
    report,
  );
  if (target.kind === "pull-request-head") await job.port.postComment(deps.redact(report));
}

/** A build that threw: paused for another worker, cancelled, or failed; steps in progress go back to pending. */
async function stopBuild(run: BuildRun, ledger: BuildLedger, error: unknown): Promise<void> {
  const { deps, job, state } = run;
  const cancelled = error instanceof Cancelled || job.signal.aborted;
  for (const [id, progress] of Object.entries(state.steps))
    if (progress.status === "building")
      state.steps[id] = { status: "pending", ...(progress.usage ? { usage: progress.usage } : {}) };
  if (handedOver(job.signal)) {
    // Not over: another worker resumes from what was pushed, so nothing here asks for `/build` again.
    await run.status.save(
      "> ⏸ **Paused at a safe point:** Blueprint is restarting; another worker resumes this build from what was pushed.",
    );
    return;
  }
  state.status = cancelled ? "cancelled" : "failed";
  state.error = whyStopped(error, job.signal);
  if (!cancelled) deps.log.error({ err: error, deliveryId: job.deliveryId }, "build failed");
  await run.status.save(undefined, ledger.report());
}

/** Why a build (or a follow-up) stopped, in words: the cancellation's reason (who stopped it), or the error. */
export function whyStopped(error: unknown, signal: AbortSignal): string {
  if (!(error instanceof Cancelled) && !signal.aborted) return plainError(error);
  return typeof signal.reason === "string" ? signal.reason : "cancelled";
}
