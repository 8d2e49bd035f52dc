import { existsSync } from "node:fs";
import type { RunOutcome } from "../github/run-outcome.js";
import { costText } from "./cost-view.js";
import { storedThreadState } from "./local-port.js";
import { markdownToText, nextSteps, renderPlanText, verificationLines } from "./text-view.js";
import type { StoredThread, ThreadStore } from "./thread-store.js";

/** After a command: Blueprint's replies, then the plan or status it left, and what to do next. */
export function printOutcome(
  write: (text: string) => void,
  outcome: RunOutcome,
  options: { markdown: boolean; pullRequestFile: string },
): void {
  for (const reply of outcome.replies) write(options.markdown ? reply : markdownToText(reply));
  const latest = outcome.latest;
  if (!outcome.changed || !latest) return;
  if (options.markdown) {
    write(latest.comment.body);
    return;
  }
  const { state } = latest;
  if (!state.plan) {
    write(markdownToText(latest.comment.body));
  } else {
    write(renderPlanText(state));
    const checks = verificationLines(latest.comment.body);
    if (checks.length > 0) write(["", "Verification results", ...checks].join("\n"));
    const cost = costText(latest.comment.body);
    if (cost) write(`\n${cost}`);
  }
  if (state.status === "built" && existsSync(options.pullRequestFile))
    write(`\nPull-request text for this branch: ${options.pullRequestFile}`);
  const next = nextSteps(state);
  if (next) write(`\n${next}`);
}

/** `blueprint status`: the current thread, read from .git/blueprint. */
export function printStatus(
  write: (text: string) => void,
  thread: StoredThread | null,
  store: ThreadStore,
  markdown: boolean,
): void {
  if (!thread) {
    write('No plan yet. Run `blueprint plan "what you want done"` to start one.');
    return;
  }
  const lookup = storedThreadState(thread, store.seal(thread.number));
  write(`Thread #${thread.number} on \`${thread.baseBranch}\`: ${thread.title}  (${store.fileOf(thread.number)})`);
  if (lookup.kind === "none") {
    write("No plan yet: the last command did not get as far as planning.");
    return;
  }
  if (lookup.kind === "corrupt") {
    write(`The thread's latest state is damaged (${lookup.reason}). Run \`blueprint plan --new\` to start over.`);
    return;
  }
  const { state, comment } = lookup.latest;
  if (markdown) {
    write(comment.body);
    return;
  }
  write(state.plan ? renderPlanText(state) : markdownToText(comment.body));
  const cost = state.plan ? costText(comment.body) : "";
  if (cost) write(`\n${cost}`);
  if (state.branch) write(`\nBranch: ${state.branch}`);
  const next = nextSteps(state);
  if (next) write(`\n${next}`);
}
