import type { ThreadState } from "../workflow/state.js";

const STEP_MARKS = { pending: "[ ]", building: "[~]", done: "[x]", failed: "[!]" } as const;

/** The plan as a person reads it in a terminal: no HTML, no hidden state, commands as CLI commands. */
export function renderPlanText(state: ThreadState): string {
  const plan = state.plan;
  if (!plan) return "";
  const lines = [`Plan v${state.revision}: ${plan.title}`, `Status: ${statusWords(state)}`, ""];
  if (state.changes) lines.push(markdownToText(state.changes), "");
  lines.push(plan.summary.trim(), "", "Steps");
  for (const step of plan.steps) {
    const progress = state.steps[step.id];
    const meta = [
      step.deps.length > 0 ? `after ${step.deps.join(", ")}` : "",
      step.complexity ?? "",
      progress?.commit ? progress.commit.slice(0, 7) : "",
      progress?.status === "failed" ? `failed: ${progress.reason ?? ""}` : "",
    ].filter(Boolean);
    lines.push(
      `  ${STEP_MARKS[progress?.status ?? "pending"]} ${step.id}  ${step.title}${meta.length > 0 ? `  (${meta.join("; ")})` : ""}`,
    );
    if (step.files.length > 0) lines.push(`        files: ${step.files.join(", ")}`);
    if (step.risk) lines.push(`        risk: ${step.risk}`);
    for (const line of step.details
      .trim()
      .split("\n")
      .filter((l) => l.trim() !== ""))
      lines.push(`        ${line}`);
  }
  if (plan.risks.length > 0) lines.push("", "Risks", ...plan.risks.map((risk) => `  - ${risk}`));
  lines.push(
    "",
    "Verification",
    ...(plan.verification.length > 0 ? plan.verification.map((check) => `  - ${check}`) : ["  (none given)"]),
  );
  if (plan.manual_checks && plan.manual_checks.length > 0)
    lines.push("", "Checks for people (not run)", ...plan.manual_checks.map((check) => `  - ${check}`));
  if (plan.questions && plan.questions.length > 0)
    lines.push(
      "",
      'Open questions (they do not block a build; answer with blueprint revise "…" or as notes: blueprint build "…")',
      ...plan.questions.map((question) => `  - ${question}`),
    );
  return lines.join("\n");
}

function statusWords(state: ThreadState): string {
  switch (state.status) {
    case "pending":
      if (state.stale) return `stale: ${markdownToText(state.stale)}`;
      // Some steps built (`blueprint build S1`), and their verification failed.
      return state.error?.startsWith("verification failed")
        ? `steps built on branch ${state.branch ?? "?"}, but ${markdownToText(state.error)}`
        : "ready for review";
    case "built":
      // Never plain "built" when verification failed: the error names the failed checks.
      return `built on branch ${state.branch ?? "?"}${state.error ? `, but ${markdownToText(state.error)}` : ""}`;
    case "failed":
      return `build stopped: ${state.error ?? "see above"}`;
    default:
      return state.status.replace("_", " ");
  }
}

/** What to type next, for the state the thread is in. */
export function nextSteps(state: ThreadState): string {
  switch (state.status) {
    case "pending":
      return state.stale
        ? "Next: blueprint plan (re-plan on the current code) · blueprint build --force"
        : 'Next: blueprint build (all steps) · blueprint build S1 (a step and what it needs) · blueprint revise "feedback"';
    case "failed":
      return state.plan
        ? "Next: blueprint build (resumes from the first step not done)"
        : "Next: blueprint plan (try again)";
    case "awaiting_answer":
      return 'Next: blueprint answer "your answer" (Blueprint resumes where it stopped) · blueprint cancel (withdraw the question)';
    case "built":
      return state.branch
        ? `Review: git log --oneline ${state.base.branch}..${state.branch} · git diff ${state.base.branch}...${state.branch}`
        : "";
    default:
      return "";
  }
}

/** Verification results from a build report: `✅ npm test — exit 0`. */
export function verificationLines(commentBody: string): string[] {
  return [...commentBody.matchAll(/<summary>(✅|❌|⏭️) <code>(.*?)<\/code> — (.*?)<\/summary>/g)].map(
    ([, mark = "", command = "", status = ""]) => `  ${mark} ${unescapeHtml(command)} — ${status}`,
  );
}

/** A comment's markdown as terminal text; slash commands become the CLI's. */
export function markdownToText(markdown: string): string {
  const text = markdown
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/<\/?(sub|details|summary|b|code)>/g, "")
    .replace(/^#{1,6}\s+/gm, "")
    .replace(/^>\s?/gm, "")
    .replace(/\*\*(.+?)\*\*/g, "$1")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  return cliWording(unescapeHtml(text));
}

/** The App's advice names slash commands and comments; at a terminal they are CLI commands. */
export function cliWording(text: string): string {
  return text
    .replace(
      /\b([Cc])omment (`\/(?:plan|build|revise|status|help|cancel)\b)/g,
      (_, c: string, command: string) => `${c === "C" ? "R" : "r"}un ${command}`,
    )
    .replace(/`\/(plan|build|revise|status|help|cancel)\b/g, "`blueprint $1")
    .replace(/\b[Aa]nswer in a comment\b/g, 'Answer with `blueprint answer "…"`');
}

function unescapeHtml(text: string): string {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}
