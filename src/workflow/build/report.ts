import type { TokenUsage } from "../../shared/model-usage.js";
import { oneLine } from "../../plan/render.js";
import type { Plan } from "../../plan/schema.js";
import type { AuditEntry } from "../../tools/tool.js";
import { truncateMiddle, type CommandRunner } from "../../workspace/command-runner.js";
import { renderCostTable, renderRunCost, type Pricing } from "../cost.js";
import { renderOutsidePlan } from "../approval/index.js";
import type { ThreadState } from "../state.js";
import { quietReferences } from "./template-sections.js";

export interface VerificationResult {
  command: string;
  exitCode: number | null;
  timedOut: boolean;
  output: string;
  /** Why the entry was not run (it reads as a note for people); not run is neither passed nor failed. */
  notRun?: string;
}

/** What every build report says about where commands ran: a warning when no sandbox held them. */
export function sandboxNotes(isolation: CommandRunner["isolation"]): string[] {
  if (isolation === "bwrap") return [];
  return [
    "⚠️ The agent's commands ran **without a sandbox** (bubblewrap was off or unavailable): they could read everything this Blueprint process can.",
  ];
}

export function renderAuditLog(audit: AuditEntry[]): string {
  if (audit.length === 0)
    return "<details><summary>Audit log (nothing written or run)</summary>\n\n_No files were written and no commands were run._\n\n</details>";
  const lines = audit.map((entry) => {
    const code = entry.action === "command" ? ` → exit ${entry.exitCode ?? "killed"}` : "";
    const detail = entry.detail ? ` (${entry.detail})` : "";
    return `- ${entry.action} \`${oneLine(entry.target).replaceAll("`", "'").slice(0, 300)}\`${code}${detail}`;
  });
  return `<details><summary>Audit log (${audit.length} actions)</summary>\n\n${lines.join("\n")}\n\n</details>`;
}

/** Verification commands that did not pass (a non-zero exit, a kill, a timeout). */
export function failedChecks(verification: VerificationResult[]): VerificationResult[] {
  return verification.filter((result) => !result.notRun && (result.exitCode !== 0 || result.timedOut));
}

export function renderVerification(results: VerificationResult[], manualChecks: string[] = []): string {
  const forPeople =
    manualChecks.length > 0
      ? `\n\nFor people to check (Blueprint does not run these):\n${manualChecks.map((check) => `- ${oneLine(check)}`).join("\n")}`
      : "";
  if (results.length === 0) return `_No verification commands were configured._${forPeople}`;
  const failed = failedChecks(results).length;
  const run = results.filter((result) => !result.notRun).length;
  const verdict = failed > 0 ? `**❌ ${failed} of ${run} check${run === 1 ? "" : "s"} failed.**\n` : "";
  return verdict + results.map(renderCheck).join("\n") + forPeople;
}

function renderCheck(result: VerificationResult): string {
  const command = `<code>${oneLine(result.command).replaceAll("<", "&lt;")}</code>`;
  if (result.notRun)
    return `<details><summary>⏭️ ${command} — not run</summary>\n\n${oneLine(result.notRun).replaceAll("<", "&lt;")}\n\n</details>`;
  const ok = result.exitCode === 0;
  const status = result.timedOut ? "timed out" : `exit ${result.exitCode ?? "killed"}`;
  const output = truncateMiddle(result.output.trim(), 3000).replaceAll("```", "'''");
  return `<details><summary>${ok ? "✅" : "❌"} ${command} — ${status}</summary>\n\n\`\`\`\n${output || "(no output)"}\n\`\`\`\n\n</details>`;
}

export function renderStepLines(plan: Plan, state: ThreadState): string {
  return plan.steps
    .map((step) => {
      const progress = state.steps[step.id];
      if (progress?.status === "done" && progress.commit)
        return `- **${step.id}** ${oneLine(step.title)} — ${progress.commitUrl ? `[${progress.commit.slice(0, 7)}](${progress.commitUrl})` : progress.commit.slice(0, 7)}`;
      if (progress?.status === "done")
        return `- **${step.id}** ${oneLine(step.title)} — ${progress.tickedByHand ? "ticked by hand, skipped" : "no changes needed"}`;
      if (progress?.status === "failed")
        return `- **${step.id}** ${oneLine(step.title)} — ❌ ${oneLine(progress.reason ?? "failed")}`;
      return `- **${step.id}** ${oneLine(step.title)} — not built`;
    })
    .join("\n");
}

export function renderBuildReport(input: {
  plan: Plan;
  state: ThreadState;
  verification: VerificationResult[];
  audit: AuditEntry[];
  /** This build's usage; the cost table adds up each step's, earlier builds included. */
  usage: TokenUsage;
  pricing: Pricing;
  notes: string[];
}): string {
  const parts = ["### Build report", renderStepLines(input.plan, input.state)];
  const outside = renderOutsidePlan(input.plan, input.state);
  if (outside) parts.push(outside);
  if (input.notes.length > 0) parts.push(input.notes.map((note) => `> ${note}`).join("\n"));
  parts.push("#### Verification", renderVerification(input.verification, input.plan.manual_checks));
  const costs = renderCostTable(input.plan, input.state, input.pricing);
  if (costs) parts.push(costs);
  parts.push(renderAuditLog(input.audit), `<sub>This build: ${renderRunCost(input.usage, input.pricing)}.</sub>`);
  return parts.join("\n\n");
}

export function renderPullRequestBody(input: { issueNumber: number; plan: Plan; report: string }): string {
  // The plan and the report carry the model's words (steered by an issue anyone may write): quieted,
  // so that merging closes only the issue named here and pings no one.
  const body = quietReferences([`## ${input.plan.title}`, input.plan.summary.trim(), input.report].join("\n\n"));
  return [`Closes #${input.issueNumber}`, body, "<sub>Built by Blueprint from an approved plan.</sub>"].join("\n\n");
}
