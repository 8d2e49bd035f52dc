import type { RepoConfig } from "../config/repo-config.js";
import { CODEOWNERS_LOCATIONS, ownerLabel, ownersOf, parseCodeOwners, type CodeOwner, type CodeOwners } from "../github/codeowners.js";
import { buildOrder, withDependencies } from "../plan/order.js";
import type { Plan, PlanStep } from "../plan/schema.js";
import { plainError } from "./plan.js";
import type { ThreadPort } from "./ports.js";
import type { ThreadState } from "./state.js";

export interface CodeOwnersApproval {
  approver: string;
  plan: Plan;
  state: ThreadState;
  /** The steps the approver named (none: the whole plan). */
  steps: string[];
  /** Reads a file of the default branch, or null when it has none. */
  readDefaultBranch: (file: string) => Promise<string | null>;
}

const MAX_FILES_LISTED = 8;

/**
 * With `approvers: codeowners`, an approval counts only from someone who owns, per the default
 * branch's CODEOWNERS, at least one file of each step being built. A step none of whose files has
 * an owner needs no code owner (as on GitHub, where anyone with write access approves such files).
 * Returns the refusal to post, naming whose approval is missing for which files, or null.
 */
export async function codeOwnersRefusal(port: ThreadPort, config: RepoConfig, request: CodeOwnersApproval): Promise<string | null> {
  if (config.approvers !== "codeowners") return null;
  const found = await readCodeOwners(request.readDefaultBranch);
  if (!found) {
    return `This repository approves plans by code owners (\`approvers: codeowners\` in \`.github/blueprint.yml\`), but its default branch \`${port.repo.defaultBranch}\` has no CODEOWNERS file (${CODEOWNERS_LOCATIONS.map((file) => `\`${file}\``).join(", ")}). Add one, or set \`approvers: write\`.`;
  }
  const owns = ownershipChecker(port, request.approver);
  const building = stepsBeingBuilt(request);
  const missing: string[] = [];
  for (const step of building) {
    const owned = step.files.flatMap((file) => {
      const owners = ownersOf(found.codeowners, file);
      return owners && owners.length > 0 ? [{ file, owners }] : [];
    });
    if (owned.length === 0) continue;
    let approved = false;
    for (const { owners } of owned) if (!approved && (await owns(owners))) approved = true;
    if (!approved) missing.push(missingLine(step, owned));
  }
  if (missing.length === 0) return null;
  const unchecked = owns.unchecked();
  return [
    `@${request.approver}'s approval does not count here: this repository's plans are approved by their code owners (\`approvers: codeowners\`), and per \`${found.path}\` on \`${port.repo.defaultBranch}\` @${request.approver} owns no file of these steps. Approval is missing from:`,
    missing.join("\n"),
    "An owner of at least one file of each step listed can comment `/build` or approve the pull request.",
    ...(unchecked.length > 0 ? [`Blueprint could not check membership of ${unchecked.join("; ")}.`] : []),
  ].join("\n\n");
}

async function readCodeOwners(read: CodeOwnersApproval["readDefaultBranch"]): Promise<{ path: string; codeowners: CodeOwners } | null> {
  for (const path of CODEOWNERS_LOCATIONS) {
    const text = await read(path);
    if (text !== null) return { path, codeowners: parseCodeOwners(text) };
  }
  return null;
}

/** The steps this approval would build: the named ones and what they need (or all), minus those done. */
function stepsBeingBuilt(request: CodeOwnersApproval): PlanStep[] {
  const wanted = request.steps.length > 0 ? withDependencies(request.plan, request.steps) : buildOrder(request.plan);
  return wanted.filter((step) => request.state.steps[step.id]?.status !== "done");
}

function missingLine(step: PlanStep, owned: Array<{ file: string; owners: CodeOwner[] }>): string {
  const files = owned.slice(0, MAX_FILES_LISTED).map(({ file, owners }) => `\`${file}\` (${owners.map(ownerLabel).join(", ")})`);
  const more = owned.length > MAX_FILES_LISTED ? `, and ${owned.length - MAX_FILES_LISTED} more` : "";
  return `- **${step.id}** ${step.title.replace(/\s+/g, " ")}: ${files.join(", ")}${more}`;
}

/** Whether the approver is one of some owners: by login, or through a team (asked once per team). */
function ownershipChecker(port: ThreadPort, approver: string) {
  const teams = new Map<string, Promise<boolean>>();
  const failures: string[] = [];
  const inTeam = (org: string, slug: string): Promise<boolean> => {
    const key = `${org}/${slug}`.toLowerCase();
    let member = teams.get(key);
    if (!member) {
      member = port.teamMember(org, slug, approver).catch((error: unknown) => {
        failures.push(`@${org}/${slug} (${plainError(error)})`);
        return false;
      });
      teams.set(key, member);
    }
    return member;
  };
  const owns = async (owners: CodeOwner[]): Promise<boolean> => {
    for (const owner of owners) {
      if (owner.kind === "user" && owner.login.toLowerCase() === approver.toLowerCase()) return true;
      if (owner.kind === "team" && (await inTeam(owner.org, owner.slug))) return true;
    }
    return false;
  };
  return Object.assign(owns, { unchecked: () => [...failures] });
}
