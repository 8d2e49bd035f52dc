import type { ThreadStateLookup, ThreadStateRecord } from "../../github/plan-comment.js";
import type { JobContext } from "../deps.js";
import { memoryOf, withAnswer, withFeedback, type ThreadMemory } from "../memory.js";
import type { ThreadInfo } from "../ports.js";
import type { FeedbackEntry, QuestionAnswer, ThreadState } from "../state.js";

/** What starts a planning run. */
export type PlanTrigger =
  /** `/plan [--model NAME] [instructions]`; with a plan already there it becomes a revision. */
  | { kind: "plan"; instructions: string; model?: string | null }
  /** `/revise`, a "request changes" review, or a plain comment on a pending plan. */
  | { kind: "feedback"; feedback: Omit<FeedbackEntry, "onRevision"> }
  /** The answer to a question planning asked. */
  | { kind: "answer"; answer: Omit<QuestionAnswer, "question"> };

/** Where a planning run stands: the thread's latest state, its current plan, and the run it continues. */
export interface PlanStanding {
  latest: ThreadStateRecord | null;
  current: ThreadStateRecord | null;
  /** The question this answer resumes. */
  resumed: ThreadStateRecord | null;
  /** This job's own earlier run, whose process died mid-planning: its status comment is still the newest state. */
  takenOver: ThreadStateRecord | null;
  revision: number;
  memory: ThreadMemory;
}

export function planStanding(
  lookup: ThreadStateLookup,
  trigger: PlanTrigger,
  job: Pick<JobContext, "actor" | "deliveryId">,
): PlanStanding {
  const latest = lookup.kind === "found" ? lookup.latest : null;
  const current = lookup.kind === "found" ? lookup.plan : null;
  const resumed = trigger.kind === "answer" && latest?.state.status === "awaiting_answer" ? latest : null;
  const takenOver = latest?.state.status === "planning" && latest.state.deliveryId === job.deliveryId ? latest : null;
  // A taken-over run goes on with what its first run worked out (that memory already holds this command).
  const revision = takenOver
    ? takenOver.state.revision
    : resumed
      ? resumed.state.revision
      : current?.state.plan
        ? current.state.revision + 1
        : 1;
  const memory = takenOver
    ? memoryOf(takenOver.state)
    : nextMemory(memoryOf(latest?.state), trigger, job.actor, current, resumed);
  return { latest, current, resumed, takenOver, revision, memory };
}

function nextMemory(
  previous: ThreadMemory | null,
  trigger: PlanTrigger,
  actor: string,
  current: ThreadStateRecord | null,
  resumed: ThreadStateRecord | null,
): ThreadMemory {
  const base: ThreadMemory = previous ?? {
    instructions: "",
    requestedBy: actor,
    feedback: [],
    answers: [],
    explored: [],
  };
  const onRevision = current?.state.revision ?? 1;
  switch (trigger.kind) {
    case "plan":
      if (!current?.state.plan)
        return {
          ...base,
          instructions: trigger.instructions,
          requestedBy: actor,
          feedback: [],
          answers: previous ? base.answers : [],
        };
      return withFeedback(base, {
        author: actor,
        source: "plan",
        text: trigger.instructions || "(re-plan requested without new instructions)",
        onRevision,
      });
    case "feedback":
      return withFeedback(base, { ...trigger.feedback, onRevision });
    case "answer":
      return withAnswer(base, { ...trigger.answer, question: resumed?.state.question ?? "(question)" });
  }
}

export function initialState(
  info: ThreadInfo,
  defaultBranch: string,
  memory: ThreadMemory,
  revision: number,
  deliveryId: string,
): ThreadState {
  return {
    v: 1,
    status: "planning",
    deliveryId,
    revision,
    plan: null,
    planHash: null,
    ...memory,
    base: { branch: info.pullRequest?.baseRef ?? defaultBranch, sha: "" },
    head: info.pullRequest
      ? { ref: info.pullRequest.headRef, sha: info.pullRequest.headSha, sameRepo: info.pullRequest.sameRepo }
      : null,
    planHead: info.pullRequest?.headSha ?? null,
    branch: null,
    steps: {},
    stale: null,
    question: null,
    questionMode: null,
    questionStep: null,
    approvedBy: null,
    approvedOn: null,
    approvals: [],
    buildDeliveries: [],
    buildNotes: [],
    model: null,
    changes: null,
    instructionFiles: [],
    postedAt: null,
    error: null,
    pullRequest: null,
    followUp: null,
    updatedAt: new Date().toISOString(),
  };
}
