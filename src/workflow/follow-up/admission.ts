import { findThreadState, type ThreadStateRecord } from "../../github/plan-comment.js";
import { threadSeal } from "../../github/state-marker.js";
import { buildTarget } from "../build/index.js";
import type { JobContext, WorkflowDeps } from "../deps.js";
import { repoMinimumRefusal } from "../approval/index.js";
import { loadRepoConfig } from "../thread-context.js";
import type { FollowUpRequest, FollowUpSource } from "./request.js";

// What a follow-up checks before it starts. Each answers why not in words for `/fix` (a review is never answered when
// it starts nothing), or what the follow-up goes on with.

export type Refused = { ok: false; why: string | null };

/** The plan this pull request follows, and whether it is built; `notBuilt`: a review revises it as before. */
export async function builtPlan(
  deps: WorkflowDeps,
  job: JobContext,
  request: FollowUpRequest,
): Promise<{ ok: true; record: ThreadStateRecord } | Refused | { ok: "not-built" }> {
  const { port } = job;
  const lookup = findThreadState(await port.comments(), threadSeal(deps.stateKey, port));
  const record = lookup.kind === "found" ? lookup.plan : null;
  const none = "There is no Blueprint plan built for this pull request, so there is nothing to follow up.";
  if (!record) return { ok: false, why: none };
  // The plan opened this very pull request (on an issue), or was made on it; the CLI has no pull requests.
  const { state } = record;
  const onIssue = port.number !== request.pullRequest;
  const bound =
    port.reviews === null || (onIssue ? state.pullRequest === request.pullRequest && !state.head : state.head !== null);
  if (!bound) return { ok: false, why: none };
  if (state.status !== "built") return { ok: "not-built" };
  return { ok: true, record };
}

/** The review as GitHub has it now, the repository's settings (default branch only), and the branch to push to. */
export async function followUpSource(
  deps: WorkflowDeps,
  job: JobContext,
  request: FollowUpRequest,
  record: ThreadStateRecord,
  /** `checks`: failing checks, which follow `ci_fix` and no person's permission. */
  asked: "review" | "checks" = "review",
): Promise<{ ok: true; source: FollowUpSource } | Refused> {
  const { port } = job;
  // 1. A review counts as GitHub has it: by the actor, not dismissed, not an approval.
  if (request.reviewId !== null && port.reviews) {
    const review = await port.reviews.review(request.pullRequest, request.reviewId);
    if (!review || review.author !== job.actor || !["CHANGES_REQUESTED", "COMMENTED"].includes(review.state))
      return { ok: false, why: null };
  }
  // 2. The repository and its configuration.
  const mirror = await deps.repoCache.sync({
    cloneUrl: port.repo.cloneUrl,
    ref: `refs/heads/${port.repo.defaultBranch}`,
    token: () => port.gitToken(),
  });
  const read = await loadRepoConfig((ref, file) => mirror.readFile(ref, file), port.repo.defaultBranch);
  if (!read.ok)
    return { ok: false, why: `${read.message}\n\nFix the file on the default branch, then comment \`/fix\`.` };
  const config = read.config;
  if (asked === "review" && config.follow_up === "off")
    return { ok: false, why: "Follow-ups are off in this repository (`follow_up: off` in `.github/blueprint.yml`)." };
  const refusal = asked === "review" ? await repoMinimumRefusal(port, job.actor, config) : null;
  if (refusal) return { ok: false, why: refusal };
  // 3. The branch: the one the plan was built on, still the pull request's head, in this repository.
  const info = await port.info();
  const target = buildTarget(info, config, port.repo.defaultBranch);
  if (typeof target === "string") return { ok: false, why: target };
  if (record.state.branch !== target.branch)
    return {
      ok: false,
      why: `The plan was built on \`${record.state.branch ?? "no branch"}\`, not \`${target.branch}\`: comment \`/plan\` for a fresh plan.`,
    };
  const pull = port.reviews ? await port.reviews.pullRequest(request.pullRequest) : null;
  if (port.reviews && (!pull || !pull.open || !pull.sameRepo || pull.headRef !== target.branch))
    return {
      ok: false,
      why: `Pull request #${request.pullRequest} is not open on \`${target.branch}\`, so Blueprint pushes no follow-up to it.`,
    };
  return { ok: true, source: { mirror, config, info, target, pull } };
}
