import type { ThreadStateRecord } from "../../github/plan-comment.js";
import type { Plan } from "../../plan/schema.js";
import type { JobContext, WorkflowDeps } from "../deps.js";
import type { FollowUpState, ThreadState } from "../state.js";
import type { RepoConfig } from "../../config/repo-config.js";
import type { Mirror } from "../../workspace/mirror.js";
import type { BuildTarget, EarlierSpending } from "../build/index.js";
import type { PullRequestFacts, ThreadInfo } from "../ports.js";
import type { ThreadWork } from "./threads.js";

/** What asks for a follow-up: a review on the pull request, or `/fix` (on GitHub or in the CLI). */
export interface FollowUpRequest {
  /** Where the review or `/fix` was given; the plan may live on the issue it was built for. */
  pullRequest: number;
  /** The `/fix` comment; null for a review. */
  commentId: number | null;
  reviewId: number | null;
  reviewState: "changes_requested" | "commented" | null;
  /** The review's body, or `/fix`'s notes. */
  text: string;
}

/** What the hidden state records as handled, so that a redelivered review or `/fix` does nothing twice. */
export function handledKey(request: FollowUpRequest): string {
  return request.reviewId !== null ? `review:${request.reviewId}` : `comment:${request.commentId ?? "cli"}`;
}

/** An admitted follow-up: the plan's state with its F-steps, and the threads they answer. */
export interface FollowUpRun {
  deps: WorkflowDeps;
  job: JobContext;
  request: FollowUpRequest;
  record: ThreadStateRecord;
  source: FollowUpSource;
  /** The built plan (its own steps; the F-steps are in `followUp`). */
  plan: Plan;
  /** The follow-up's own copy of the thread's state, saved into the plan comment as it goes. */
  state: ThreadState;
  followUp: FollowUpState;
  /** The threads this follow-up takes up, by id. */
  work: Map<string, ThreadWork>;
  /** What the state records it handled (`review:<id>`, `comment:<id>`, `checks:<sha>`). */
  handled: string;
  /** It goes on with a follow-up a restart paused. */
  resumed?: boolean;
  /** What the job spent before the build (the failing checks' diagnosis): the build's cost cap is what is left. */
  earlier?: EarlierSpending;
}

/** Where a follow-up builds: the repository, its settings (default branch only), the thread and the branch. */
export interface FollowUpSource {
  mirror: Mirror;
  config: RepoConfig;
  info: ThreadInfo;
  target: BuildTarget;
  /** The pull request as GitHub has it now (null in the CLI). */
  pull: PullRequestFacts | null;
}

/** A plan's first follow-up, on its pull request. */
export function newFollowUp(pullRequest: number): FollowUpState {
  return {
    pullRequest,
    status: "pending",
    error: null,
    steps: [],
    handled: [],
    threads: {},
    usage: { prompt: 0, completion: 0, cached: 0, requests: 0 },
    cost: null,
    ci: { attempts: 0, fixes: [] },
    paused: null,
  };
}
