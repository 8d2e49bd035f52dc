import type { RunOutcome } from "../github/run-outcome.js";
import type { ActionEvent } from "./event.js";

/** The step's outputs, as action.yml declares them. */
export interface ActionOutputs {
  status: string;
  "plan-url": string;
  "pr-url": string;
  branch: string;
}

export function outputsOf(outcome: RunOutcome): ActionOutputs {
  return {
    status: outcome.latest?.state.status ?? "none",
    "plan-url": outcome.plan?.comment.url ?? "",
    "pr-url": outcome.pullRequestUrl ?? "",
    branch: outcome.latest?.state.branch ?? "",
  };
}

/** The job summary: what was asked, where the thread stands, and what went wrong if anything did. */
export function renderJobSummary(
  event: Exclude<ActionEvent, { kind: "ignored" }>,
  outcome: RunOutcome,
  problems: string[],
  /** The permissions the workflow's token lacked for what this run had to read. */
  permissions: string[] = [],
): string {
  const outputs = outputsOf(outcome);
  const asked =
    event.kind === "comment"
      ? `comment by @${event.actor}: \`${firstLine(event.body)}\``
      : event.kind === "review"
        ? `${event.state.toLowerCase()} review by @${event.actor}`
        : `failed ${event.what} on \`${event.headSha.slice(0, 7)}\` (pull request #${event.pullRequest})`;
  const plan = outcome.plan?.state.plan;
  const rows: Array<[string, string]> = [
    ["Thread", `${event.repo.owner}/${event.repo.name}#${event.number}`],
    ["Event", asked],
    ["Status", `\`${outputs.status}\`${outcome.changed ? "" : " (unchanged by this run)"}`],
  ];
  if (plan && outcome.plan)
    rows.push(["Plan", `[v${outcome.plan.state.revision}: ${escapeCell(plan.title)}](${outputs["plan-url"]})`]);
  if (outputs.branch) rows.push(["Branch", `\`${outputs.branch}\``]);
  if (outputs["pr-url"]) rows.push(["Pull request", outputs["pr-url"]]);
  const lines = [
    "## Blueprint",
    "",
    "| | |",
    "|---|---|",
    ...rows.map(([name, value]) => `| ${name} | ${escapeCell(value)} |`),
  ];
  if (problems.length > 0) lines.push("", "### ❌ Failed", "", ...problems.map((problem) => `- ${problem}`));
  if (permissions.length > 0)
    lines.push("", "### ⚠️ Permissions the workflow's token lacks", "", ...permissions.map((line) => `- ${line}`));
  if (outcome.replies.length > 0)
    lines.push("", "### Replies posted", "", ...outcome.replies.map((reply) => `> ${firstLine(reply)}`));
  return lines.join("\n");
}

function firstLine(text: string): string {
  const line = text.trim().split("\n")[0] ?? "";
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, "\\|");
}
