import type { RepoConfig } from "../../config/repo-config.js";
import { CODEOWNERS_LOCATIONS } from "../../github/codeowners.js";
import { buildOrder, withDependencies } from "../../plan/order.js";
import type { Plan, PlanStep } from "../../plan/schema.js";
import {
  approverLogins,
  describeApprovals,
  describeOwnedFiles,
  matcherNotes,
  ownedFiles,
  ownerMatcher,
  readCodeOwners,
  uncovered,
} from "./code-owner-coverage.js";
import type { ThreadPort } from "../ports.js";
import type { ThreadState } from "../state.js";

export interface CodeOwnersApproval {
  approver: string;
  plan: Plan;
  /** The thread's state: the approvals it records for this revision add up with this one. */
  state: ThreadState;
  /** The steps the approver named (none: the whole plan). */
  steps: string[];
  /** Reads a file of the default branch, or null when it has none. */
  readDefaultBranch: (file: string) => Promise<string | null>;
}

/**
 * With `approvers: codeowners`, a build starts only when every file the steps being built list that
 * has owners, per the default branch's CODEOWNERS, is covered by an approval of one of its owners:
 * this one, or one recorded earlier for the same revision (approvals add up). A file without owners
 * needs none (as on GitHub, where anyone with write access approves it). What the steps then change
 * is checked again after each step (workflow/approval/written-files.ts): this check only saves a build that
 * could not be pushed. Returns the refusal to post, naming the files and their owners, or null.
 */
export async function codeOwnersRefusal(
  port: ThreadPort,
  config: RepoConfig,
  request: CodeOwnersApproval,
): Promise<string | null> {
  if (config.approvers !== "codeowners") return null;
  const found = await readCodeOwners(request.readDefaultBranch);
  if (!found) {
    return `This repository approves plans by code owners (\`approvers: codeowners\` in \`.github/blueprint.yml\`), but its default branch \`${port.repo.defaultBranch}\` has no CODEOWNERS file (${CODEOWNERS_LOCATIONS.map((file) => `\`${file}\``).join(", ")}). Add one, or set \`approvers: write\`.`;
  }
  const matcher = ownerMatcher(port);
  const approvers = approverLogins({ approvals: request.state.approvals, approvedBy: request.approver });
  const missing: string[] = [];
  let approverOwnsAny = false;
  for (const step of stepsBeingBuilt(request)) {
    const owned = ownedFiles(found.codeowners, step.files);
    for (const { owners } of owned)
      if (!approverOwnsAny && (await matcher.owns(request.approver, owners))) approverOwnsAny = true;
    const left = await uncovered(owned, approvers, matcher);
    if (left.length > 0)
      missing.push(`- **${step.id}** ${step.title.replace(/\s+/g, " ")}: ${describeOwnedFiles(left)}`);
  }
  if (missing.length === 0) return null;
  const where = `this repository's plans are approved by their code owners (\`approvers: codeowners\`), and per \`${found.path}\` on \`${port.repo.defaultBranch}\``;
  return [
    approverOwnsAny
      ? `@${request.approver}'s approval is recorded, but ${where} these files of the steps still need an approval from one of their owners:`
      : `@${request.approver}'s approval does not count here: ${where} @${request.approver} owns no file of these steps. Approval is missing from:`,
    missing.join("\n"),
    `Each file listed needs an approval from one of its owners: a \`/build\` or an approving review by any of them counts, and approvals by several owners add up${request.state.approvals.length > 0 ? ` (so far: ${describeApprovals(request.state.approvals)})` : ""}.`,
    ...matcherNotes(matcher),
  ].join("\n\n");
}

/** The steps this approval would build: the named ones and what they need (or all), minus those done. */
function stepsBeingBuilt(request: CodeOwnersApproval): PlanStep[] {
  const wanted = request.steps.length > 0 ? withDependencies(request.plan, request.steps) : buildOrder(request.plan);
  return wanted.filter((step) => request.state.steps[step.id]?.status !== "done");
}
