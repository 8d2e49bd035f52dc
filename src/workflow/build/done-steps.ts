import type { DoneStep } from "../../agent/prompts.js";
import type { PlanStep } from "../../plan/schema.js";
import type { Workspace } from "../../workspace/workspace.js";
import { PLAN_TRAILER } from "./target.js";
import type { ThreadState } from "../state.js";

/** A summary kept in the state for a step done without a commit (the marker lives in a comment of limited size). */
export const MAX_KEPT_SUMMARY = 500;

/** The plan's steps done so far, each with its commit and the summary its commit message holds. */
export async function doneSteps(planSteps: PlanStep[], state: ThreadState, tree: Workspace): Promise<DoneStep[]> {
  const done: DoneStep[] = [];
  for (const planStep of planSteps) {
    const progress = state.steps[planStep.id];
    if (progress?.status !== "done") continue;
    const message = progress.commit ? await tree.commitMessage(progress.commit) : null;
    done.push({ id: planStep.id, commit: progress.commit, summary: message ? summaryOf(message) : progress.summary });
  }
  return done;
}

/** `S2: title\n\n<summary>\n\nBlueprint-Plan: …`: the summary between the subject and the trailer. */
function summaryOf(message: string): string {
  return message
    .split("\n")
    .slice(1)
    .filter((line) => !line.startsWith(`${PLAN_TRAILER}:`))
    .join("\n")
    .trim();
}
