import { z } from "zod";
import { planSchema } from "../plan/schema.js";

export const threadStatusSchema = z.enum([
  "planning",
  "pending",
  "awaiting_answer",
  "building",
  "built",
  "failed",
  "superseded",
  "cancelled",
]);
export type ThreadStatus = z.output<typeof threadStatusSchema>;

const usageSchema = z.object({
  prompt: z.number().int().min(0),
  completion: z.number().int().min(0),
  cached: z.number().int().min(0),
  requests: z.number().int().min(0),
});

const stepProgressSchema = z.object({
  status: z.enum(["pending", "building", "done", "failed"]),
  commit: z.string().optional(),
  commitUrl: z.string().optional(),
  reason: z.string().optional(),
  tickedByHand: z.boolean().optional(),
  /**
   * A step done without a commit (nothing to change): the agent's complete_step summary, cut short. Committed steps
   * keep theirs in the commit message.
   */
  summary: z.string().optional(),
  /** The model tokens the step's runs used, all builds together (the report prices them per step). */
  usage: usageSchema.optional(),
  /** A step whose commit waits, unpushed, for a code owner's approval: the commit, kept under `ref` in the mirror. */
  held: z.object({ commit: z.string(), ref: z.string() }).optional(),
  /**
   * Files the step's commit changed that the plan's `files` do not cover (at most a few dozen named, with the total).
   */
  outsidePlan: z.object({ files: z.array(z.string()), total: z.number().int().min(0) }).optional(),
});

/** Feedback on a plan, kept so every revision sees the whole history. */
export const feedbackSchema = z.object({
  author: z.string(),
  source: z.enum(["revise", "plan", "review", "comment"]),
  text: z.string(),
  /** The revision the feedback was given on. */
  onRevision: z.number().int(),
});

export const questionAnswerSchema = z.object({
  question: z.string(),
  answer: z.string(),
  author: z.string(),
});

/** What an approver wrote with their approval (`/build S2 keep the API stable`, an approving review's body). */
export const buildNoteSchema = z.object({
  author: z.string(),
  source: z.enum(["build", "review"]),
  text: z.string(),
});

/**
 * A valid approval of the revision the state belongs to (`/build` or an approving review), with
 * when it was given: code owners' approvals add up, and one given before a hand edit of the plan
 * does not cover the edit.
 */
export const recordedApprovalSchema = z.object({
  login: z.string(),
  via: z.enum(["build", "review"]),
  at: z.string().nullable(),
});

/** A fix-up step built after the plan (F1, F2, …): from review threads, a review's body or `/fix`'s notes. */
export const followUpStepSchema = z.object({
  id: z.string().regex(/^F\d{1,3}$/),
  title: z.string().min(1).max(200),
  details: z.string().max(60_000),
  files: z.array(z.string()).max(100),
  deps: z.array(z.string()).max(0).default([]),
  /** The review threads it answers (GraphQL ids); empty for notes. */
  threads: z.array(z.string()).default([]),
  /** `suggestion`: reviewers' suggestion blocks, applied as written without the model. */
  kind: z.enum(["suggestion", "model"]),
});

/** What a review thread got from a follow-up: the newest comment seen in it, and the reply it was given. */
export const followedThreadSchema = z.object({
  /** The newest comment in the thread when it was handled: a later comment by a person makes it new work again. */
  lastComment: z.number().int(),
  step: z.string().nullable(),
  outcome: z.enum(["pending", "addressed", "left"]),
});

/** The follow-up of a built plan on its pull request (the plan comment's `Follow-up` section). */
export const followUpSchema = z.object({
  pullRequest: z.number().int().positive(),
  status: z.enum(["pending", "building", "built", "failed", "cancelled"]),
  error: z.string().nullable().default(null),
  steps: z.array(followUpStepSchema).default([]),
  /** Reviews and `/fix` comments already handled (`review:<id>`, `comment:<id>`): a redelivery does nothing twice. */
  handled: z.array(z.string()).default([]),
  threads: z.record(z.string(), followedThreadSchema).default({}),
  /** The review, `/fix` or failing commit whose follow-up a restart paused: its job, run again, goes on with it. */
  paused: z.string().nullable().default(null),
  /** Failing checks followed up: the automatic builds started, and for each commit Blueprint pushed to fix a failure, which failure. */
  ci: z
    .object({
      attempts: z.number().int().min(0).default(0),
      fixes: z.array(z.object({ failure: z.string(), pushed: z.string() })).default([]),
    })
    .default({ attempts: 0, fixes: [] }),
  /** The model tokens every follow-up used, and their cost in words when the model has a price. */
  usage: usageSchema.default({ prompt: 0, completion: 0, cached: 0, requests: 0 }),
  cost: z.string().nullable().default(null),
});

/** What Blueprint remembers about one issue or pull request; it lives in the plan comment's hidden marker. */
export const threadStateSchema = z.object({
  v: z.literal(1),
  status: threadStatusSchema,
  revision: z.number().int().min(1),
  plan: planSchema.nullable(),
  planHash: z.string().nullable(),
  requestedBy: z.string(),
  instructions: z.string(),
  base: z.object({ branch: z.string(), sha: z.string() }),
  /** For a pull request: the head the plan was made on. */
  head: z.object({ ref: z.string(), sha: z.string(), sameRepo: z.boolean() }).nullable(),
  /**
   * For a pull request: the commit the plan, and its "Blueprint plan" check run, were made on. A build
   * moves `head` on to each commit it pushes; this stays (null in states saved before it existed).
   */
  planHead: z.string().nullable().default(null),
  branch: z.string().nullable(),
  steps: z.record(z.string(), stepProgressSchema),
  stale: z.string().nullable().default(null),
  question: z.string().nullable().default(null),
  error: z.string().nullable().default(null),
  pullRequest: z.number().int().nullable().default(null),
  /** Files planning read: a compact record handed to build runs (unless --fresh). */
  explored: z.array(z.string()).default([]),
  feedback: z.array(feedbackSchema).default([]),
  answers: z.array(questionAnswerSchema).default([]),
  /** While awaiting an answer: which kind of run asked, and in build mode the step. */
  questionMode: z.enum(["plan", "build"]).nullable().default(null),
  questionStep: z.string().nullable().default(null),
  /** Who approved the build in progress (a resumed build runs on their approval). */
  approvedBy: z.string().nullable().default(null),
  /**
   * What the build in progress's approval was given on: the base branch's tip (an issue's plan) and the pull request's
   * head. A build resumed by an answer runs on that approval, so it stops when either moved since, other than by
   * Blueprint's own pushes (null in states saved before it was kept: the plan's own base and head stand in).
   */
  approvedOn: z.object({ base: z.string().nullable(), head: z.string().nullable() }).nullable().default(null),
  /**
   * The deliveries whose builds of this revision started (the last BUILD_DELIVERIES_KEPT): one of them run again once
   * the build has left "building" is a job put back in a shared queue after it ran, and builds nothing.
   */
  buildDeliveries: z.array(z.string()).default([]),
  /** Every valid approval of this revision so far (see recordedApprovalSchema). */
  approvals: z.array(recordedApprovalSchema).default([]),
  /** The approvers' notes for building this revision, oldest first; every step is given them. */
  buildNotes: z.array(buildNoteSchema).default([]),
  /**
   * The model `/plan --model` picked from the repository's `models:`; its revisions and its build use it. Null: the
   * configured model.
   */
  model: z.string().nullable().default(null),
  /**
   * The repository's instruction files (AGENTS.md …) on the default branch that the plan's steps follow, named in the
   * plan comment.
   */
  instructionFiles: z.array(z.string()).default([]),
  /** The follow-up on the built plan's pull request (review threads and `/fix` become F-steps), once there is one. */
  followUp: followUpSchema.nullable().default(null),
  /** "What changed since the previous revision", computed when the revision was made. */
  changes: z.string().nullable().default(null),
  /** When this revision's plan was posted: an approval given before then did not see it. */
  postedAt: z.string().nullable().default(null),
  updatedAt: z.string(),
  /**
   * The webhook delivery whose planning run wrote this revision: that job, taken over after its process died, reuses
   * its status comment. Absent in states written before it was recorded.
   */
  deliveryId: z.string().optional(),
});

export type ThreadState = z.output<typeof threadStateSchema>;
export type FeedbackEntry = z.output<typeof feedbackSchema>;
export type QuestionAnswer = z.output<typeof questionAnswerSchema>;
export type BuildNote = z.output<typeof buildNoteSchema>;
export type RecordedApproval = z.output<typeof recordedApprovalSchema>;
export type FollowUpState = z.output<typeof followUpSchema>;
export type FollowUpStep = z.output<typeof followUpStepSchema>;

/** How many build deliveries a revision's state remembers. */
export const BUILD_DELIVERIES_KEPT = 20;

/** The commit a pull request's plan was made on (its plan check is there), however far a build has moved `head`. */
export function planMadeOn(state: Pick<ThreadState, "planHead" | "head">): string | null {
  return state.planHead ?? state.head?.sha ?? null;
}
