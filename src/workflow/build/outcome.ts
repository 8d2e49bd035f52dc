import { oneLine } from "../../plan/render.js";
import type { Plan, PlanStep } from "../../plan/schema.js";
import type { GitIdentity } from "../../workspace/untrusted-git.js";
import type { Workspace } from "../../workspace/workspace.js";
import type { Redactor } from "../../agent/redact.js";
import { failedChecks, renderPullRequestBody, type VerificationResult } from "./report.js";
import type { WorkflowDeps } from "../deps.js";
import { plainError } from "../plain-error.js";
import type { ThreadInfo, ThreadPort } from "../ports.js";
import type { ThreadState } from "../state.js";

/**
 * How a build ends without claiming more than it did: an unfinished step keeps its work, unticked;
 * failed checks are named and keep the pull request a draft.
 */

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
  input: {
    target: { kind: "issue-branch" | "pull-request-head"; branch: string };
    info: ThreadInfo;
    plan: Plan;
    state: ThreadState;
    verification: VerificationResult[];
    report: string;
    description?: string | undefined;
  },
): Promise<string> {
  const failed = failedChecks(input.verification);
  const verdict =
    failed.length > 0 ? `> ⚠️ **Built, but verification failed:** ${describeChecks(failed)}` : "> 🎉 **Built**";
  if (input.target.kind === "pull-request-head") {
    return `${verdict} — commits pushed to this pull request's branch.${failed.length > 0 ? " See the report below." : ""}`;
  }
  const pull = await port.upsertPullRequest({
    head: input.target.branch,
    base: input.state.base.branch,
    title: input.plan.title,
    // The repository's pull request template, filled in, opens the description; the plan and the report follow.
    body: deps.redact(
      [
        ...(input.description ? [input.description, "---"] : []),
        renderPullRequestBody({ issueNumber: input.info.number, plan: input.plan, report: input.report }),
      ].join("\n\n"),
    ),
    draft: failed.length > 0,
  });
  input.state.pullRequest = pull.number;
  return failed.length > 0
    ? `${verdict} — draft pull request ${pull.url}. See the report below.`
    : `${verdict} — pull request ${pull.url}`;
}

/** The plan comment's status line when the agent reported a step blocked. */
export function blockedStatusLine(step: PlanStep, reason: string): string {
  return `> 🚧 **Build stopped at ${step.id}: the agent could not do it.** ${oneLine(reason).slice(0, 600)}\n>\n> ${step.id} is not ticked. Fix what blocks it (or \`/revise\` the plan), then comment \`/build\` to resume at ${step.id}.`;
}

/** Why a step ended without being done. */
export type UnfinishedStep =
  { ok: "blocked"; reason: string } | { ok: false; reason: string } | { ok: "question"; question: string };

/**
 * What a step changed before it ended unfinished (blocked, failed, or waiting for an answer) is
 * never dropped silently: it is pushed in a commit labelled WIP, whose subject is not `S2: …` so
 * it never counts as the step done, and the returned note says where. Null: nothing to say.
 */
export async function keepUnfinishedWork(
  tree: Workspace,
  step: PlanStep,
  ending: UnfinishedStep,
  target: {
    branch: string;
    token: string | null;
    identity: GitIdentity;
    redact: Redactor;
    mayPush?: (sha: string) => Promise<string | null>;
  },
): Promise<{ sha: string | null; note: string | null }> {
  const [label, why] =
    ending.ok === "question"
      ? ["waiting for an answer", `It asked:\n${ending.question}`]
      : ending.ok === "blocked"
        ? ["blocked", `The agent could not do it:\n${ending.reason}`]
        : ["failed", `It failed: ${ending.reason}`];
  const subject = `WIP ${step.id} (${label}, not done): ${step.title}`;
  let commit;
  try {
    // The agent's words go to GitHub in the commit message: redacted like everything posted.
    commit = await tree.commitAll(`${subject}\n\n${target.redact(why)}`, target.identity);
  } catch (error) {
    return {
      sha: null,
      note: `${step.id}'s unfinished changes could not be committed (${plainError(error)}), so they were not kept.`,
    };
  }
  if (!commit)
    return {
      sha: null,
      note: ending.ok === "blocked" ? `${step.id} changed no files before it was reported blocked.` : null,
    };
  // What code owners have not approved is never pushed, finished or not.
  const refusal = await target.mayPush?.(commit.sha);
  if (refusal) return { sha: null, note: refusal };
  try {
    await tree.push(target.branch, target.token);
  } catch (error) {
    return {
      sha: null,
      note: `${step.id}'s unfinished changes (${commit.changedFiles.length} files) could not be pushed (${plainError(error)}), so they were not kept.`,
    };
  }
  const files = `${commit.changedFiles.length} file${commit.changedFiles.length === 1 ? "" : "s"}`;
  return {
    sha: commit.sha,
    note: `${step.id}'s unfinished changes (${files}) are kept, not ticked, in commit \`${commit.sha.slice(0, 7)}\` ("WIP ${step.id} (${label}, not done)") on \`${target.branch}\`. The build resumes ${step.id} on top of them; revert that commit to start ${step.id} afresh.`,
  };
}
