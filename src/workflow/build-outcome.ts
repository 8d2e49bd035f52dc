import { oneLine } from "../plan/render.js";
import type { Plan, PlanStep } from "../plan/schema.js";
import type { GitIdentity } from "../workspace/git.js";
import type { Workspace } from "../workspace/workspace.js";
import { renderPullRequestBody, type VerificationResult } from "./build-report.js";
import type { WorkflowDeps } from "./deps.js";
import { plainError } from "./plan.js";
import type { ThreadInfo, ThreadPort } from "./ports.js";
import type { ThreadState } from "./state.js";

/** How a build ends honestly: a blocked step keeps its work unticked; failed checks are named and make the pull request a draft. */

/** Verification commands that did not pass (a non-zero exit, a kill, a timeout). */
export function failedChecks(verification: VerificationResult[]): VerificationResult[] {
  return verification.filter((result) => result.exitCode !== 0 || result.timedOut);
}

/** "`npm test` (exit 1), `npm run lint` (timed out)": the failed checks, for a status line. */
export function describeChecks(failed: VerificationResult[]): string {
  const named = failed.slice(0, 5).map((result) => {
    const why = result.timedOut ? "timed out" : `exit ${result.exitCode ?? "killed"}`;
    return `\`${oneLine(result.command).replaceAll("`", "'").slice(0, 120)}\` (${why})`;
  });
  return failed.length > 5 ? `${named.join(", ")} and ${failed.length - 5} more` : named.join(", ");
}

/**
 * Hands a finished build over: for an issue, a pull request (a draft while verification fails);
 * on a pull request, its branch. Returns the status line for the plan comment.
 */
export async function handOver(
  deps: WorkflowDeps,
  port: ThreadPort,
  input: { target: { kind: "issue-branch" | "pull-request-head"; branch: string }; info: ThreadInfo; plan: Plan; state: ThreadState; verification: VerificationResult[]; report: string },
): Promise<string> {
  const failed = failedChecks(input.verification);
  const verdict = failed.length > 0 ? `> ⚠️ **Built, but verification failed:** ${describeChecks(failed)}` : "> 🎉 **Built**";
  if (input.target.kind === "pull-request-head") {
    return `${verdict} — commits pushed to this pull request's branch.${failed.length > 0 ? " See the report below." : ""}`;
  }
  const pull = await port.upsertPullRequest({
    head: input.target.branch,
    base: input.state.base.branch,
    title: input.plan.title,
    body: deps.redact(renderPullRequestBody({ issueNumber: input.info.number, plan: input.plan, report: input.report })),
    draft: failed.length > 0,
  });
  input.state.pullRequest = pull.number;
  return failed.length > 0 ? `${verdict} — draft pull request ${pull.url}. See the report below.` : `${verdict} — pull request ${pull.url}`;
}

/** The plan comment's status line when the agent reported a step blocked. */
export function blockedStatusLine(step: PlanStep, reason: string): string {
  return `> 🚧 **Build stopped at ${step.id}: the agent could not do it.** ${oneLine(reason).slice(0, 600)}\n>\n> ${step.id} is not ticked. Fix what blocks it (or \`/revise\` the plan), then comment \`/build\` to resume at ${step.id}.`;
}

/**
 * What a blocked step changed is never dropped silently: it is pushed in a commit labelled WIP (its
 * subject is not `S2: …`, so it never counts as the step done) and the returned note says where.
 */
export async function keepBlockedWork(
  tree: Workspace,
  step: PlanStep,
  reason: string,
  target: { branch: string; token: string | null; identity: GitIdentity },
): Promise<{ sha: string | null; note: string }> {
  let commit;
  try {
    commit = await tree.commitAll(`WIP ${step.id} (blocked, not done): ${step.title}\n\nThe agent could not finish ${step.id}:\n${reason}`, target.identity);
  } catch (error) {
    return { sha: null, note: `${step.id}'s unfinished changes could not be committed (${plainError(error)}), so they were not kept.` };
  }
  if (!commit) return { sha: null, note: `${step.id} changed no files before it was reported blocked.` };
  try {
    await tree.push(target.branch, target.token);
  } catch (error) {
    return { sha: null, note: `${step.id}'s unfinished changes (${commit.changedFiles.length} files) could not be pushed (${plainError(error)}), so they were not kept.` };
  }
  const short = commit.sha.slice(0, 7);
  return {
    sha: commit.sha,
    note: `${step.id}'s unfinished changes (${commit.changedFiles.length} file${commit.changedFiles.length === 1 ? "" : "s"}) are kept, not ticked, in commit \`${short}\` ("WIP ${step.id} (blocked, not done)") on \`${target.branch}\`. \`/build\` resumes ${step.id} on top of them; revert that commit to start ${step.id} afresh.`,
  };
}
