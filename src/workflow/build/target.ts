import type { RepoConfig } from "../../config/repo-config.js";
import type { Plan } from "../../plan/schema.js";
import type { Mirror } from "../../workspace/mirror.js";
import type { ThreadInfo } from "../ports.js";
import type { ThreadState } from "../state.js";

/**
 * Why the plan is stale, or null: the base branch moved since `since` (the plan's base unless told) and touched files
 * the plan names.
 */
export async function baseMovedUnderPlan(
  mirror: Mirror,
  state: ThreadState,
  since: string = state.base.sha,
): Promise<string | null> {
  // On a pull request the head is what counts (checked with the approval).
  if (!state.plan || !since || state.head) return null;
  const tip = await mirror.resolve(`refs/heads/${state.base.branch}`);
  if (!tip || tip === since) return null;
  const named = new Set(state.plan.steps.flatMap((step) => step.files));
  const touched = (await mirror.changedFiles(since, tip)).filter((file) => named.has(file));
  if (touched.length === 0) return null;
  return `\`${state.base.branch}\` moved (\`${since.slice(0, 7)}\` → \`${tip.slice(0, 7)}\`) and changed files the plan names: ${touched
    .slice(0, 10)
    .map((file) => `\`${file}\``)
    .join(", ")}.`;
}

/**
 * Step 4 of a build: why the plan is too stale to build, or null. A new approval: the base moved under the plan since it
 * was made, unless `--force`; what the approval was given on is kept in the state. A build resumed by an answer runs on
 * that approval: the base moved under the plan since it was given (Blueprint pushes to its own branch, never the base).
 */
export async function staleForApproval(
  mirror: Mirror,
  state: ThreadState,
  approval: { force: boolean; resuming: boolean },
  info: ThreadInfo,
): Promise<string | null> {
  if (approval.resuming) return baseMovedUnderPlan(mirror, state, state.approvedOn?.base ?? state.base.sha);
  const stale = await baseMovedUnderPlan(mirror, state);
  const base = state.head ? null : await mirror.resolve(`refs/heads/${state.base.branch}`);
  state.approvedOn = { base, head: info.pullRequest?.headSha ?? null };
  return stale && !approval.force ? stale : null;
}

export type BuildTarget = { kind: "issue-branch" | "pull-request-head"; branch: string };

/**
 * Where the commits go: our own branch, or a same-repository PR head; never a fork or the default
 * branch. Always computed from the thread and the configuration, never taken from the hidden state.
 * A string says why there is nowhere to push.
 */
export function buildTarget(info: ThreadInfo, config: RepoConfig, defaultBranch: string): BuildTarget | string {
  if (info.pullRequest) {
    if (!info.pullRequest.sameRepo) {
      return "This pull request comes from a fork. Blueprint never pushes to forks; to build this plan, push the branch to this repository (or open an issue and `/plan` there).";
    }
    if (info.pullRequest.headRef === defaultBranch)
      return "This pull request's head is the default branch; Blueprint never pushes to the default branch.";
    return { kind: "pull-request-head", branch: info.pullRequest.headRef };
  }
  const branch = `${config.branch_prefix.replace(/\/?$/, "/")}issue-${info.number}`;
  if (branch === defaultBranch)
    return "The configured branch prefix would make Blueprint push to the default branch; change `branch_prefix`.";
  return { kind: "issue-branch", branch };
}

/** Why the target is not the branch the plan was partly built on, or null. */
export function branchMoved(state: ThreadState, target: BuildTarget): string | null {
  if (
    !state.branch ||
    state.branch === target.branch ||
    !Object.values(state.steps).some((step) => step.status === "done")
  )
    return null;
  return `This plan was partly built on \`${state.branch}\`, but its branch is now \`${target.branch}\` (did \`branch_prefix\` change?). Blueprint only builds on the branch it computes: restore the setting, or comment \`/plan\` for a fresh plan.`;
}

/** The trailer that ties a step commit to the plan revision it built (see recoverPushedSteps). */
export const PLAN_TRAILER = "Blueprint-Plan";

/**
 * A plan revision's identity: each revision is posted as its own comment, so the comment id tells
 * revisions apart, and it stays the same for every build of that revision (hand edits included).
 */
export function planRevisionTrailer(planCommentId: number, revision: number): string {
  return `${planCommentId}/v${revision}`;
}

/**
 * After a crash between push and marker update: steps whose commits are already on the branch count
 * as done. Only commits this revision made count (an earlier revision's `S1: …` is another S1), and
 * never for a step a person unticked so that it is built again.
 */
export function recoverPushedSteps(
  state: ThreadState,
  plan: Plan,
  commits: Array<{ sha: string; subject: string; trailers: string[] }>,
  recovery: { revision: string; unticked: string[]; commitUrl: (sha: string) => string },
): void {
  for (const commit of commits) {
    const id = /^(S\d+): /.exec(commit.subject)?.[1];
    if (!id || !commit.trailers.includes(recovery.revision) || recovery.unticked.includes(id)) continue;
    if (plan.steps.some((step) => step.id === id) && state.steps[id]?.status !== "done") {
      state.steps[id] = { status: "done", commit: commit.sha, commitUrl: recovery.commitUrl(commit.sha) };
    }
  }
}
