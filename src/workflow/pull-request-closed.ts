import type { RepoConfig } from "../config/repo-config.js";
import { findThreadState, withStatusLine, type ThreadStateRecord } from "../github/plan-comment.js";
import { commentSeal, threadSeal } from "../github/state-marker.js";
import type { BranchDeletion, Mirror } from "../workspace/mirror.js";
import type { JobContext, WorkflowDeps } from "./deps.js";
import { redactRendered } from "./safe-port.js";
import { ThreadLabels } from "./surfaces/index.js";
import { plainError } from "./plain-error.js";
import type { ThreadState } from "./state.js";
import { loadRepoConfig } from "./thread-context.js";

/** What the `pull_request.closed` webhook said. */
export interface ClosedPullRequest {
  pullRequest: number;
  merged: boolean;
  headRef: string;
  /** The head the pull request was merged or closed at. */
  headSha: string;
}

/**
 * Blueprint's pull request was merged or closed. Merged: its branch is deleted, unless the
 * repository's settings do that already or the branch holds anything Blueprint did not make.
 * Closed unmerged: the branch stays and `/build` can build the plan again. Either way the plan
 * comment says so.
 */
export async function followClosedPullRequest(
  deps: WorkflowDeps,
  job: JobContext,
  closed: ClosedPullRequest,
): Promise<void> {
  const { port } = job;
  // 1. Only the pull request the thread's build opened, from the branch Blueprint made for the issue.
  const seal = threadSeal(deps.stateKey, port);
  const lookup = findThreadState(await port.comments(), seal);
  const record = lookup.kind === "found" ? lookup.plan : null;
  if (
    !record ||
    record.state.head ||
    record.state.branch !== closed.headRef ||
    record.state.pullRequest !== closed.pullRequest
  )
    return;

  // 2. The repository as it is now, and its configuration (default branch only; broken: none of its settings count).
  const mirror = await deps.repoCache.sync({
    cloneUrl: port.repo.cloneUrl,
    ref: `refs/heads/${port.repo.defaultBranch}`,
    token: () => port.gitToken(),
  });
  const configRead = await loadRepoConfig((ref, file) => mirror.readFile(ref, file), port.repo.defaultBranch);
  const config = configRead.ok ? configRead.config : null;

  // 3. What happened, in the plan comment's status line and state.
  const { state, statusLine } = closed.merged
    ? await merged(deps, job, { record, closed, mirror, config })
    : closedUnmerged(job, record, closed);
  await port.updateComment(
    record.comment.id,
    redactRendered(
      deps.redact,
      withStatusLine(record.comment.body, statusLine, state, commentSeal(seal, record.comment.id)),
    ),
  );
  if (config) await new ThreadLabels(port, config, deps.log, job.deliveryId).follow(state);
}

/** Merged: the plan stays built; the branch goes when it is Blueprint's alone. */
async function merged(
  deps: WorkflowDeps,
  job: JobContext,
  input: { record: ThreadStateRecord; closed: ClosedPullRequest; mirror: Mirror; config: RepoConfig | null },
): Promise<{ state: ThreadState; statusLine: string }> {
  const { record, closed } = input;
  // Closed, then reopened and merged: built after all, but only when every step is done. A plan is also
  // cancelled by `/cancel` mid-build, and merging what was built by then does not build the rest.
  const state: ThreadState =
    record.state.status === "cancelled" && notBuiltSteps(record.state).length === 0
      ? { ...record.state, status: "built", error: null, updatedAt: new Date().toISOString() }
      : record.state;
  const branch = await mergedBranch(deps, job, input);
  // A build of some steps only (`/build S2`) opens a pull request too: the line does not call the plan built.
  const headline =
    state.status === "built"
      ? `🎉 **Built, merged in #${closed.pullRequest}**`
      : `🔀 **Steps built so far merged in #${closed.pullRequest}**`;
  return { state, statusLine: `> ${headline} by @${job.actor}. ${branch}` };
}

/** The merged branch deleted, or why it stays. */
async function mergedBranch(
  deps: WorkflowDeps,
  job: JobContext,
  input: { record: ThreadStateRecord; closed: ClosedPullRequest; mirror: Mirror; config: RepoConfig | null },
): Promise<string> {
  const { closed, mirror, config } = input;
  const branch = `\`${closed.headRef}\``;
  const gone = `The branch ${branch} is deleted already.`;
  const moved = (sha: string) =>
    `The branch ${branch} is kept: it has moved since the merge (to \`${sha.slice(0, 7)}\`).`;
  const tip = await mirror.resolve(`refs/heads/${closed.headRef}`);
  if (!tip) return gone;
  // Unknown (the job's token may not read the setting) counts as no: deleting it twice is harmless.
  if ((await job.port.deletesMergedBranches()) === true)
    return `The repository deletes merged branches, so GitHub removes ${branch}.`;
  const notBuilt = notBuiltSteps(input.record.state);
  // The next /build goes on from this branch.
  if (notBuilt.length > 0)
    return `The branch ${branch} is kept: ${notBuilt.join(", ")} ${notBuilt.length === 1 ? "is" : "are"} not built yet, and \`/build\` builds on it.`;
  if (tip !== closed.headSha) return moved(tip);
  const others = await othersOnBranch(deps, input.mirror, input.record.state.base.sha, tip, config).catch(
    (error: unknown) => `(Blueprint could not read who made its commits: ${plainError(error)})`,
  );
  if (others) return `The branch ${branch} is kept: it carries commits by others than Blueprint ${others}.`;
  // Only at the tip looked at above: a commit pushed since then keeps the branch (the remote checks, atomically).
  const deletion = await mirror
    .deleteBranch(closed.headRef, tip)
    .catch((error: unknown): BranchDeletion => ({ kind: "refused", reason: plainError(error) }));
  switch (deletion.kind) {
    case "deleted":
      return `Its branch ${branch} is deleted.`;
    case "gone":
      return gone;
    case "moved":
      return moved(deletion.tip);
    case "refused":
      deps.log.warn({ reason: deletion.reason, deliveryId: job.deliveryId }, "could not delete a merged branch");
      return `The branch ${branch} could not be deleted: ${deletion.reason}`;
  }
}

/** The plan's steps not done yet, by id. */
function notBuiltSteps(state: ThreadState): string[] {
  return (state.plan?.steps ?? []).filter((step) => state.steps[step.id]?.status !== "done").map((step) => step.id);
}

/**
 * Who besides Blueprint made (authored or committed) a commit on the branch since the plan's base,
 * e.g. "(Ada, GitHub)"; null when nobody did. Blueprint is its bot identity, or the configured commit author.
 */
async function othersOnBranch(
  deps: WorkflowDeps,
  mirror: Mirror,
  base: string,
  tip: string,
  config: RepoConfig | null,
): Promise<string | null> {
  const ours = new Set(
    [deps.identity, config?.commit_author].flatMap((person) => (person ? [person.email.toLowerCase()] : [])),
  );
  const others = new Set<string>();
  for (const commit of await mirror.commitPeople(base, tip)) {
    for (const person of [commit.author, commit.committer])
      if (!ours.has(person.email.toLowerCase())) others.add(person.name || person.email);
  }
  if (others.size === 0) return null;
  const named = [...others].slice(0, 5);
  return `(${named.join(", ")}${others.size > named.length ? ", …" : ""})`;
}

/** Closed unmerged: everything pushed stays, and a built plan can be built again (a new pull request). */
function closedUnmerged(
  job: JobContext,
  record: ThreadStateRecord,
  closed: ClosedPullRequest,
): { state: ThreadState; statusLine: string } {
  const reason = `pull request #${closed.pullRequest} was closed without merging`;
  const state: ThreadState =
    record.state.status === "built"
      ? { ...record.state, status: "cancelled", error: reason, updatedAt: new Date().toISOString() }
      : record.state;
  return {
    state,
    statusLine: `> ⏹️ **Pull request #${closed.pullRequest} was closed without merging** by @${job.actor}. Everything pushed stays on \`${closed.headRef}\`; comment \`/build\` to build the plan again (steps already done are kept) and open a new pull request.`,
  };
}
