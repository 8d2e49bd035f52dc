import type { Plan, PlanStep } from "./schema.js";
import { buildOrder } from "./order.js";

export type StepStatus = "pending" | "building" | "done" | "failed";

export interface StepProgress {
  status: StepStatus;
  commit?: string | undefined;
  commitUrl?: string | undefined;
  reason?: string | undefined;
  /** Ticked by a person on GitHub rather than built by Blueprint. */
  tickedByHand?: boolean | undefined;
}

export type PlanProgress = Record<string, StepProgress>;

/** The plan as markdown: summary, task list, mermaid graph, details, risks and verification. */
export function renderPlanBody(plan: Plan, progress: PlanProgress = {}): string {
  const parts = [
    plan.summary.trim(),
    "### Steps",
    plan.steps.map((step) => renderTaskItem(step, progress[step.id])).join("\n"),
    renderMermaid(plan),
    "### Step details",
    plan.steps.map(renderStepDetails).join("\n\n"),
  ];
  if (plan.risks.length > 0) parts.push("### Risks", plan.risks.map((risk) => `- ${oneLine(risk)}`).join("\n"));
  parts.push(
    "### Verification",
    plan.verification.length > 0
      ? plan.verification.map((check) => `- \`${inlineCode(check)}\``).join("\n")
      : "_No verification commands were given._",
  );
  if (plan.questions && plan.questions.length > 0) {
    parts.push("### Open questions", plan.questions.map((question) => `- ${oneLine(question)}`).join("\n"));
  }
  // Model-written text must never carry a hidden comment (or a forged state marker) into the post.
  return parts.join("\n\n").replaceAll("<!--", "&lt;!--");
}

/** `- [ ] **S1** title — `files` · after S1 · status`: parse-friendly, see readVisibleSteps. */
export function renderTaskItem(step: PlanStep, progress?: StepProgress): string {
  const ticked = progress?.status === "done";
  const mark = progress?.status === "failed" ? "❌ " : progress?.status === "building" ? "⏳ " : "";
  const segments: string[] = [];
  if (step.files.length > 0) segments.push(step.files.map((file) => `\`${inlineCode(file)}\``).join(", "));
  if (step.deps.length > 0) segments.push(`after ${step.deps.join(", ")}`);
  if (progress?.status === "done" && progress.commit) {
    const short = progress.commit.slice(0, 7);
    segments.push(progress.commitUrl ? `✅ [${short}](${progress.commitUrl})` : `✅ ${short}`);
  } else if (progress?.status === "done" && progress.tickedByHand) {
    segments.push("ticked by hand");
  } else if (progress?.status === "done") {
    segments.push("✅ no changes needed");
  }
  if (progress?.status === "failed" && progress.reason) segments.push(`failed: ${oneLine(progress.reason)}`);
  const meta = segments.length > 0 ? ` — ${segments.join(" · ")}` : "";
  return `- [${ticked ? "x" : " "}] **${step.id}** ${mark}${oneLine(step.title)}${meta}`;
}

export function renderMermaid(plan: Plan): string {
  const lines = ["```mermaid", "flowchart TD"];
  for (const step of buildOrder(plan)) {
    lines.push(`  ${step.id}["${mermaidLabel(`${step.id}: ${step.title}`)}"]`);
  }
  for (const step of plan.steps) {
    for (const dep of step.deps) lines.push(`  ${dep} --> ${step.id}`);
  }
  lines.push("```");
  return lines.join("\n");
}

function renderStepDetails(step: PlanStep): string {
  const body = [step.details.trim() || "_No further details._"];
  if (step.files.length > 0) body.push(`**Files:** ${step.files.map((file) => `\`${inlineCode(file)}\``).join(", ")}`);
  if (step.deps.length > 0) body.push(`**Depends on:** ${step.deps.join(", ")}`);
  if (step.complexity) body.push(`**Complexity:** ${step.complexity}`);
  if (step.risk) body.push(`**Risk:** ${oneLine(step.risk)}`);
  return `<details><summary><b>${step.id}</b> ${escapeHtml(oneLine(step.title))}</summary>\n\n${body.join("\n\n")}\n\n</details>`;
}

export function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function inlineCode(text: string): string {
  return oneLine(text).replaceAll("`", "'");
}

function mermaidLabel(text: string): string {
  return oneLine(text).replace(/["<>]/g, (char) => ({ '"': "#quot;", "<": "#lt;", ">": "#gt;" })[char] ?? char);
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>]/g, (char) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[char] ?? char);
}
