import type { TokenUsage } from "../../shared/model-usage.js";
import type { RepoConfig } from "../../config/repo-config.js";
import { inlineCode } from "../../plan/render.js";
import type { Plan, PlanStep } from "../../plan/schema.js";
import type { Mirror } from "../../workspace/mirror.js";
import type { CommitResult, Workspace } from "../../workspace/workspace.js";
import {
  approverLogins,
  describeApprovals,
  describeOwnedFiles,
  ownedFiles,
  matcherNotes,
  ownerMatcher,
  readCodeOwners,
  uncovered,
  type FoundCodeOwners,
  type OwnedFile,
} from "./code-owner-coverage.js";
import { outsidePlan } from "./outside-plan.js";
import type { ThreadPort } from "../ports.js";
import type { ThreadState } from "../state.js";

/**
 * What a step wrote, checked before it is pushed. With `approvers: codeowners`, every file the
 * step's commit changed that has owners (per the default branch's CODEOWNERS) needs an approval of
 * this revision by one of its owners: a step whose commit changes a file nobody approved for is
 * held, unpushed and unticked, and the thread names the files and their owners. The commit is kept
 * under a ref of the mirror; the approval that covers it resumes the build and pushes that very
 * commit, or builds the step again when the commit is not on this machine. Whatever the setting,
 * the files changed outside the plan's `files` are recorded for the report.
 */

export interface WrittenFilesInput {
  port: ThreadPort;
  config: RepoConfig;
  plan: Plan;
  /** The build's state: its approvals count, and a hold is recorded in it. */
  state: ThreadState;
  mirror: Mirror;
  tree: Workspace;
  /** The plan comment: with the thread and the step, it names a held commit's ref. */
  planCommentId: number;
  /** The build report's notes. */
  notes: string[];
}

export interface StepHold {
  statusLine: string;
  /** For the thread: the files, their owners, and what resumes the build. */
  comment: string;
}

export type WrittenFilesVerdict =
  { held: StepHold } | { held: null; outsidePlan: { files: string[]; total: number } | undefined };

export interface WrittenFilesApproval {
  /**
   * The step's held commit, checked out to be pushed instead of building the step again; null when there is none to
   * reuse.
   */
  reuseHeld(step: PlanStep): Promise<CommitResult | null>;
  /** After the step's commit, before its push: hold it (recorded in the state), or go on. */
  check(step: PlanStep, commit: CommitResult, usage: TokenUsage): Promise<WrittenFilesVerdict>;
  /** Why an unfinished step's commit may not be pushed, or null. */
  unfinishedRefusal(step: PlanStep, sha: string): Promise<string | null>;
  /** The step's commit is pushed: its held copy, if any, is let go. */
  pushed(step: PlanStep): Promise<void>;
}

export async function writtenFilesApproval(input: WrittenFilesInput): Promise<WrittenFilesApproval> {
  const { port, plan, state, mirror, tree } = input;
  const found =
    input.config.approvers === "codeowners"
      ? await readCodeOwners((file) => mirror.readFile(`refs/heads/${port.repo.defaultBranch}`, file))
      : null;
  if (input.config.approvers === "codeowners" && !found)
    throw new Error(
      `the default branch \`${port.repo.defaultBranch}\` has no CODEOWNERS file any more, so no step can be approved by its code owners`,
    );
  const matcher = ownerMatcher(port);
  const heldRef = (step: PlanStep) => `refs/blueprint/held/${port.number}/${input.planCommentId}/${step.id}`;
  /** Steps that came to this build held: their refs go once they are pushed. */
  const wasHeld = new Set<string>();
  const filesOf = (sha: string) => tree.filesChanged(`${sha}^`, sha);
  /** The owned files of a commit that no approval covers yet (none without `approvers: codeowners`). */
  const unapproved = async (files: string[]): Promise<OwnedFile[]> =>
    found ? uncovered(ownedFiles(found.codeowners, files), approverLogins(state), matcher) : [];

  return {
    async reuseHeld(step) {
      const held = state.steps[step.id]?.held;
      if (!held) return null;
      wasHeld.add(step.id);
      const kept = await mirror.resolve(held.ref);
      const head = await tree.head();
      if (kept === held.commit && (await tree.revParse(`${held.commit}^`)) === head) {
        await tree.checkout(held.commit);
        return { sha: held.commit, changedFiles: await filesOf(held.commit) };
      }
      if (kept) await mirror.dropRef(held.ref);
      input.notes.push(
        kept === held.commit
          ? `${step.id}'s held commit \`${held.commit.slice(0, 7)}\` was made on another tip of the branch than the one it now has, so ${step.id} was built again (and checked again before its push).`
          : `${step.id}'s held commit \`${held.commit.slice(0, 7)}\` is not on the Blueprint server that resumed the build (it was held on another one, or cleared), so ${step.id} was built again (and checked again before its push).`,
      );
      return null;
    },

    async check(step, commit, usage) {
      const files = await filesOf(commit.sha);
      const missing = await unapproved(files);
      if (missing.length === 0 || !found) return { held: null, outsidePlan: outsidePlan(plan, files) };
      const ref = heldRef(step);
      await mirror.keepCommit(ref, commit.sha);
      const named = missing
        .map(({ file }) => `\`${inlineCode(file)}\``)
        .slice(0, 5)
        .join(", ");
      state.steps[step.id] = {
        status: "failed",
        reason: `held before its push: it changed files that need a code owner's approval (${named}${missing.length > 5 ? ", …" : ""})`,
        held: { commit: commit.sha, ref },
        usage,
      };
      state.status = "failed";
      state.error = `${step.id} waits for a code owner's approval of files it changed (${named}${missing.length > 5 ? ", …" : ""}).`;
      return { held: holdMessages(step, missing, found, state, matcherNotes(matcher), port.repo.defaultBranch) };
    },

    async unfinishedRefusal(step, sha) {
      if (!found) return null;
      const missing = await unapproved(await filesOf(sha));
      if (missing.length === 0) return null;
      return `${step.id}'s unfinished changes were not pushed: they change files that need a code owner's approval, which nobody who owns them has given for this plan (${describeOwnedFiles(missing)}). They are dropped; ${step.id} starts afresh when the build resumes.`;
    },

    async pushed(step) {
      if (wasHeld.has(step.id)) await mirror.dropRef(heldRef(step));
    },
  };
}

function holdMessages(
  step: PlanStep,
  missing: OwnedFile[],
  found: FoundCodeOwners,
  state: ThreadState,
  notes: string[],
  defaultBranch: string,
): StepHold {
  const lines = missing.slice(0, 30).map((entry) => `- ${describeOwnedFiles([entry])}`);
  if (missing.length > 30) lines.push(`- and ${missing.length - 30} more`);
  const approvals =
    state.approvals.length > 0
      ? `Approvals of this plan so far: ${describeApprovals(state.approvals)}.`
      : "Nobody has approved this plan yet.";
  return {
    statusLine: `> 🔒 **Build held before pushing ${step.id}:** its commit changes files that need a code owner's approval (see the comment below). ${step.id} is not ticked and nothing of it was pushed; an approval by their owners resumes the build.`,
    comment: [
      `🔒 **Blueprint held ${step.id} (${step.title.replace(/\s+/g, " ")}) before pushing it.** This repository's plans are approved by their code owners (\`approvers: codeowners\`), and ${step.id}'s commit changes files that, per \`${found.path}\` on \`${defaultBranch}\`, need an approval from one of their owners, which none of them has given for this plan. Each file, with who may approve it:`,
      lines.join("\n"),
      approvals,
      `${step.id} is not ticked and nothing of it was pushed: its commit is kept on this Blueprint server. Once every file listed has an approval from one of its owners (a \`/build\` or an approving review; approvals by several owners add up), the build resumes at ${step.id} and pushes that commit after checking it again. Should the build resume on a server that does not have the commit, ${step.id} is built again and checked again.`,
      ...notes,
    ].join("\n\n"),
  };
}
