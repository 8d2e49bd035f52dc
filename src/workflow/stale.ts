import { commentSeal, threadSeal } from "../github/state-marker.js";
import { findThreadState, renderPlanComment } from "../github/plan-comment.js";
import { settlePlanCheck } from "./surfaces/index.js";
import type { JobContext, WorkflowDeps } from "./deps.js";
import { redactRendered } from "./safe-port.js";
import { planMadeOn } from "./state.js";

/**
 * New commits on a pull request with a pending plan: the plan no longer describes the head, so mark it stale, and
 * cancel its plan check (its Build button would only be refused now; `/build --force` still builds it).
 */
export async function markStaleOnPush(deps: WorkflowDeps, job: JobContext, headSha: string): Promise<void> {
  const { port } = job;
  const lookup = findThreadState(await port.comments(), threadSeal(deps.stateKey, port));
  if (lookup.kind !== "found" || !lookup.plan) return;
  const { comment, state } = lookup.plan;
  // Commits Blueprint pushed itself are recorded as the new head; nothing is stale then.
  if (!state.head || state.head.sha === headSha) return;
  if (state.status !== "pending" && state.status !== "failed" && state.status !== "cancelled") return;
  const stale = `new commits were pushed to the pull request (\`${state.head.sha.slice(0, 7)}\` → \`${headSha.slice(0, 7)}\`) after the plan was made.`;
  if (state.stale === stale) return;
  await port.updateComment(
    comment.id,
    redactRendered(
      deps.redact,
      renderPlanComment(
        { ...state, stale, updatedAt: new Date().toISOString() },
        commentSeal(threadSeal(deps.stateKey, port), comment.id),
      ),
    ),
  );
  const madeOn = planMadeOn(state);
  if (madeOn)
    await settlePlanCheck(
      deps,
      port,
      { revision: state.revision, headSha: madeOn },
      { conclusion: "cancelled", title: "Stale: new commits were pushed" },
    );
}
