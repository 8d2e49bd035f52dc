import { commentSeal, readStateMarker, type ThreadSeal } from "../github/state-marker.js";
import type { LocalWrite } from "./local-port.js";
import { markdownToText } from "./text-view.js";

/** Turns the thread's comment edits into progress lines: planning started, each step building, done or failed. */
export function progressPrinter(write: (line: string) => void, seal: ThreadSeal): (event: LocalWrite) => void {
  const seen = new Map<number, { heading: string; steps: Record<string, string>; verifying: boolean }>();
  return ({ comment }) => {
    const read = readStateMarker(comment.body, commentSeal(seal, comment.id));
    if (read.kind !== "ok") return;
    const state = read.state;
    const before = seen.get(comment.id) ?? { heading: "", steps: {}, verifying: false };
    const now = { heading: before.heading, steps: { ...before.steps }, verifying: before.verifying };
    seen.set(comment.id, now);
    if (state.status === "planning") {
      now.heading = markdownToText(comment.body.split("\n")[0] ?? "");
      if (now.heading !== before.heading) write(now.heading);
      return;
    }
    if (!state.plan || state.status === "superseded") return;
    for (const step of state.plan.steps) {
      const progress = state.steps[step.id];
      const status = progress?.status ?? "pending";
      now.steps[step.id] = status;
      if (before.steps[step.id] === status) continue;
      if (status === "building") write(`⏳ ${step.id} ${step.title}…`);
      // A step already done when the run started is not news.
      else if (status === "done" && before.steps[step.id] !== undefined)
        write(
          `✓ ${step.id} ${step.title}${progress?.commit ? ` (${progress.commit.slice(0, 7)})` : " (no changes needed)"}`,
        );
      else if (status === "failed") write(`✗ ${step.id} ${step.title}: ${progress?.reason ?? "failed"}`);
    }
    now.verifying = comment.body.includes("**Verifying…**");
    if (now.verifying && !before.verifying) write("⏳ Verifying…");
  };
}
