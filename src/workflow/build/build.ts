import { approvedPlan, buildSource, planAsItNowReads, takeApproval, waitingForCodeOwners } from "./admission.js";
import { runBuild } from "./run.js";
import type { BuildRequest } from "./request.js";
import { BuildCheck } from "./check.js";
import { buildStatus, type BuildStatus } from "./status.js";
import { branchMoved, buildTarget, staleForApproval } from "./target.js";
import { STALE_WHILE_WAITING } from "../approval/index.js";
import type { JobContext, WorkflowDeps } from "../deps.js";
import { handedOver } from "../../shared/hand-over.js";
import { ThreadLabels } from "../surfaces/index.js";
import { BUILD_DELIVERIES_KEPT, planMadeOn } from "../state.js";

export type { BuildRequest } from "./request.js";

/** `/build` or an approving review: build the latest plan step by step on Blueprint's branch. */
export async function buildThread(deps: WorkflowDeps, job: JobContext, request: BuildRequest): Promise<void> {
  const { port } = job;
  // 1. Is the approval valid? (Checked before touching the repository: an invalid one starts nothing.)
  const approved = await approvedPlan(deps, job, request);
  if (!approved) return;

  // 2. The repository and its configuration (default branch only): may this approver approve under it?
  const source = await buildSource(deps, job, request, approved);
  if (!source) return;

  // 3. The plan as it now reads (a maintainer may have edited it), and the code owners it needs.
  const toBuild = await planAsItNowReads(deps, job, request, approved);
  if (!toBuild) return;
  if (await waitingForCodeOwners(job, request, approved, source, toBuild)) return;
  takeApproval(request, toBuild);
  const started = toBuild.state.buildDeliveries.filter((id) => id !== job.deliveryId);
  toBuild.state.buildDeliveries = [...started, job.deliveryId].slice(-BUILD_DELIVERIES_KEPT);
  // The plan comment is the build's status comment: saves go out at once and in order; a model
  // retry shows under the status line (a throttled edit) until the model answers again.
  const labels = new ThreadLabels(port, source.config, deps.log, job.deliveryId);
  const status = buildStatus(deps, job, toBuild.planComment, toBuild.render, () => labels.follow(toBuild.state));

  // 4. A plan is stale when the base moved under the files it names (a resumed build: since it was approved).
  const resuming = request.answer !== undefined;
  const stale = await staleForApproval(source.mirror, toBuild.state, { ...request.approval, resuming }, approved.info);
  if (stale && resuming) {
    // Nothing saved: the question stays open, the answer unused.
    await port.postComment(
      `The plan is stale: ${stale} This happened while the build waited for an answer, so the answer does not resume it. ${STALE_WHILE_WAITING}`,
    );
    return;
  }
  if (stale) {
    toBuild.state.stale = stale;
    await status.save();
    await port.postComment(
      `The plan is stale: ${stale} Comment \`/plan\` to re-plan on the current base, or \`/build --force\` to build it anyway.`,
    );
    return;
  }

  // 5. Where the commits go: our own branch, or a same-repository PR head; never a fork or the default branch.
  const target = buildTarget(approved.info, source.config, port.repo.defaultBranch);
  if (typeof target === "string") {
    await port.postComment(target);
    return;
  }
  const moved = branchMoved(toBuild.state, target);
  if (moved) {
    await port.postComment(moved);
    return;
  }

  // 6. The steps built, verified and handed over (workflow/build/run.ts), followed by the "Blueprint build" check run.
  await labels.show("approved");
  const planHead = planMadeOn(toBuild.state);
  const check = new BuildCheck(port, deps.log, toBuild.plan, toBuild.state);
  await check.start();
  await runBuild({
    deps,
    job,
    request,
    info: approved.info,
    ...source,
    ...toBuild,
    status: followedBy(status, check),
    target,
    check,
  });
  await check.finish(planHead, handedOver(job.signal));
}

/** Each save of the plan comment lets the build check follow the branch's head. */
function followedBy(status: BuildStatus, check: BuildCheck): BuildStatus {
  return {
    save: async (statusLine, report) => {
      await status.save(statusLine, report);
      await check.follow();
    },
    showRetry: (retryLine) => status.showRetry(retryLine),
  };
}
