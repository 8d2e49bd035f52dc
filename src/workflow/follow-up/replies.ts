import { oneLine } from "../../plan/render.js";
import { plainError } from "../plain-error.js";
import type { FollowUpStep } from "../state.js";
import type { FollowUpRun } from "./request.js";

/**
 * Each thread the follow-up took up hears what became of it, in the thread: the commit that addressed it (short SHA,
 * linked), or why it was left. With `resolve_threads: true` the addressed ones are resolved too.
 */
export async function answerThreads(run: FollowUpRun, only: "all" | "new" = "all"): Promise<void> {
  const { job, followUp, source, deps } = run;
  const reviews = job.port.reviews;
  if (!reviews) return;
  for (const [id, work] of run.work) {
    // A thread told already which step waits for it is not told again.
    if (only === "new" && work.planned) continue;
    const record = followUp.threads[id];
    const step = followUp.steps.find((candidate) => candidate.id === record?.step);
    if (!record || !step) continue;
    const answer = answerFor(run, step);
    const first = work.thread.comments[0];
    if (!first) continue;
    try {
      await reviews.reply(followUp.pullRequest, first.id, answer.text);
      if (answer.addressed && source.config.resolve_threads) await reviews.resolve(id);
    } catch (error) {
      deps.log.warn(
        { err: error, deliveryId: job.deliveryId },
        `could not answer a review thread: ${plainError(error)}`,
      );
    }
    followUp.threads[id] = {
      ...record,
      lastComment: Math.max(record.lastComment, work.newest),
      outcome: answer.outcome,
    };
  }
}

interface ThreadAnswer {
  text: string;
  addressed: boolean;
  outcome: "addressed" | "left" | "pending";
}

/** What one thread is told, from its step's progress. */
function answerFor(run: FollowUpRun, step: FollowUpStep): ThreadAnswer {
  const { state, followUp } = run;
  const progress = state.steps[step.id];
  const named = `**${step.id}**`;
  if (progress?.status === "done" && progress.commit) {
    const short = progress.commit.slice(0, 7);
    const link = progress.commitUrl ? `[\`${short}\`](${progress.commitUrl})` : `\`${short}\``;
    const how = step.kind === "suggestion" ? "Applied the suggestion as written" : "Addressed";
    return { text: `${how} in ${link} (${named}).`, addressed: true, outcome: "addressed" };
  }
  if (progress?.status === "done")
    return {
      text: `Left as it is (${named}): no change was needed.${progress.summary ? ` ${oneLine(progress.summary)}` : ""}`,
      addressed: false,
      outcome: "left",
    };
  if (progress?.status === "failed") {
    const reason = oneLine((progress.reason ?? "it failed").replace(/^blocked: /, ""));
    return { text: `Not addressed (${named}): ${reason}`, addressed: false, outcome: "left" };
  }
  if (followUp.status === "pending")
    return { text: `Planned as ${named}; comment \`/fix\` to build it.`, addressed: false, outcome: "pending" };
  const why = followUp.error ? ` (${oneLine(followUp.error)})` : "";
  return {
    text: `Not addressed yet: the follow-up stopped before ${named}${why}. Comment \`/fix\` to go on.`,
    addressed: false,
    outcome: "pending",
  };
}
