import { findThreadState } from "../github/plan-comment.js";
import { threadSeal, type StateKey } from "../github/state-marker.js";
import type { ThreadPort } from "./ports.js";

export const HELP_TEXT = `### Blueprint commands
| command | what it does |
|---|---|
| \`/plan [--model NAME] [instructions]\` | explore the repository read-only and post a plan (extra lines are more instructions); \`--model\` picks one of the models \`.github/blueprint.yml\` lists under \`models:\`, for this plan, its revisions and its build |
| \`/build [S1 S2…] [--fresh] [--force] [notes]\` | approve the latest plan and build it: one commit per step on Blueprint's branch, then a pull request; any words after the step ids and flags are notes every step follows |
| \`/revise <feedback>\` | ask for a revised plan |
| \`/fix [notes]\` | on the pull request of a built plan: fix-up steps F1, F2… on the same branch for its unresolved review threads (and the notes) |
| \`/cancel\` | stop the running job; everything already pushed stays |
| \`/status\` | show the current state |
| \`/help\` | this list |

**Approving:** \`/build\`, or on a pull request an approving review (its text becomes the build's notes); either approves the revision posted before it, so a newer one needs its own approval. **Revising:** \`/revise\`, a "request changes" review, or a plain comment while a plan is pending. **Following up:** once the plan is built, a review on its pull request (or \`/fix\`) becomes fix-up steps on the same branch. Only people with write access can command Blueprint.`;

export function typoReply(word: string, suggestion: string): string {
  return `Blueprint does not know \`/${word}\`. Did you mean \`/${suggestion}\`? Comment \`/help\` for the list of commands.`;
}

export function refusalReply(actor: string, minimum: string): string {
  return `Sorry @${actor}, only people with ${minimum} access (or higher) to this repository can command Blueprint.`;
}

/** `/status`: what Blueprint knows about this thread, read from GitHub itself. */
export async function statusReply(port: ThreadPort, running: string | null, stateKey: StateKey): Promise<string> {
  const lookup = findThreadState(await port.comments(), threadSeal(stateKey, port));
  const lines = ["### Blueprint status"];
  if (running) lines.push(`- Running now: ${running}`);
  if (lookup.kind === "none") {
    lines.push("- No plan yet. Comment `/plan` to start one.");
  } else if (lookup.kind === "corrupt") {
    lines.push(
      `- The latest Blueprint comment (${lookup.comment.url}) has a damaged state marker: ${lookup.reason}. Comment \`/plan\` to start over.`,
    );
  } else {
    const { state, comment } = lookup.latest;
    lines.push(`- Plan: ${state.plan ? `v${state.revision} “${state.plan.title}”` : "none yet"} — ${comment.url}`);
    lines.push(`- State: ${state.status.replace("_", " ")}${state.stale ? " (stale)" : ""}`);
    if (state.plan) {
      const done = Object.values(state.steps).filter((step) => step.status === "done").length;
      lines.push(`- Steps done: ${done} of ${state.plan.steps.length}`);
    }
    if (state.model) lines.push(`- Model: \`${state.model}\` (picked with \`/plan --model\`)`);
    if (state.branch) lines.push(`- Branch: \`${state.branch}\``);
    if (state.pullRequest) lines.push(`- Pull request: #${state.pullRequest}`);
    if (state.error) lines.push(`- Last error: ${state.error}`);
  }
  return lines.join("\n");
}
