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

/**
 * Hidden markers around the task list, so readVisibleSteps finds it by structure rather than by a
 * heading that a summary or a step could also contain. Model-written text cannot forge them: every
 * "<!--" in it is neutralised before they are added.
 */
export const STEPS_START = "<!-- blueprint:steps -->";
export const STEPS_END = "<!-- /blueprint:steps -->";

/**
 * What a task title may not show as-is because the task line uses it as markup: " — " starts the
 * metadata, a leading ⏳/❌ is the status, "<!--" would hide the rest of the line. Each becomes a
 * character reference, which GitHub displays as the character itself; "&" is escaped only where it
 * would start one of these references, so readVisibleSteps can undo the escaping exactly.
 */
const TITLE_ESCAPES: Readonly<Record<string, string>> = {
  "—": "&mdash;",
  "⏳": "&#x23F3;",
  "❌": "&#x274C;",
  "<": "&lt;",
  "&": "&amp;",
};
const TITLE_ESCAPE_PATTERN = /—|⏳|❌|<(?=!--)|&(?=(?:mdash|#x23F3|#x274C|lt|amp);)/gu;
const TITLE_UNESCAPES: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(TITLE_ESCAPES).map(([char, ref]) => [ref, char]),
);
const TITLE_UNESCAPE_PATTERN = /&(?:mdash|#x23F3|#x274C|lt|amp);/g;

/** What approvers do with a plan's open questions: they never block a build. */
const QUESTIONS_HELP =
  "_These do not block `/build`: the plan is built as written. To answer one, comment `/revise <your answer>` for a new revision, or give it as notes with the approval (`/build <your answer>`)._";

/** The plan as markdown: summary, task list, mermaid graph, details, risks and verification. */
export function renderPlanBody(plan: Plan, progress: PlanProgress = {}): string {
  const taskList = plan.steps.map((step) => renderTaskItem(step, progress[step.id])).join("\n");
  const after = [renderMermaid(plan), "### Step details", plan.steps.map(renderStepDetails).join("\n\n")];
  if (plan.notes) after.push(`<details><summary>Notes for the build</summary>\n\n${plan.notes.trim()}\n\n</details>`);
  if (plan.risks.length > 0) after.push("### Risks", plan.risks.map((risk) => `- ${oneLine(risk)}`).join("\n"));
  after.push(
    "### Verification",
    plan.verification.length > 0
      ? plan.verification.map((check) => `- \`${inlineCode(check)}\``).join("\n")
      : "_No verification commands were given._",
  );
  if (plan.manual_checks && plan.manual_checks.length > 0) {
    after.push(
      "### Checks for people (not run by Blueprint)",
      plan.manual_checks.map((check) => `- ${oneLine(check)}`).join("\n"),
    );
  }
  if (plan.questions && plan.questions.length > 0) {
    after.push(
      "### Open questions",
      `${plan.questions.map((question) => `- ${oneLine(question)}`).join("\n")}\n\n${QUESTIONS_HELP}`,
    );
  }
  return [
    neutraliseComments(plan.summary.trim()),
    "### Steps",
    STEPS_START,
    neutraliseComments(taskList),
    STEPS_END,
    neutraliseComments(after.join("\n\n")),
  ].join("\n\n");
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
  return `- [${ticked ? "x" : " "}] **${step.id}** ${mark}${escapeTaskTitle(oneLine(step.title))}${meta}`;
}

/** A title as the task line shows it; unescapeTaskTitle undoes this exactly. */
export function escapeTaskTitle(title: string): string {
  return title.replace(TITLE_ESCAPE_PATTERN, (char) => TITLE_ESCAPES[char] ?? char);
}

/** The title a task line shows, as it was before escapeTaskTitle. */
export function unescapeTaskTitle(shown: string): string {
  return shown.replace(TITLE_UNESCAPE_PATTERN, (ref) => TITLE_UNESCAPES[ref] ?? ref);
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

/** Model-written text must never carry a hidden comment (or a forged marker) into the post. */
export function neutraliseComments(markdown: string): string {
  return markdown.replaceAll("<!--", "&lt;!--");
}

/** A file name or command as a code span shows it (readVisibleSteps reads file names back in this form). */
export function inlineCode(text: string): string {
  return oneLine(text).replaceAll("`", "'");
}

function mermaidLabel(text: string): string {
  return oneLine(text).replace(/["<>]/g, (char) => ({ '"': "#quot;", "<": "#lt;", ">": "#gt;" })[char] ?? char);
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>]/g, (char) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[char] ?? char);
}
