import type { RepoConfig } from "../../config/repo-config.js";
import type { Plan } from "../../plan/schema.js";
import type { Mirror } from "../../workspace/mirror.js";
import type { Approval } from "../approval/index.js";
import type { BuildCheck } from "./check.js";
import type { BuildStatus } from "./status.js";
import type { BuildTarget } from "./target.js";
import type { JobContext, WorkflowDeps } from "../deps.js";
import type { ThreadComment, ThreadInfo } from "../ports.js";
import type { BuildNote, QuestionAnswer, ThreadState } from "../state.js";

/**
 * What a build is asked to do: `/build`, an approving review or a Build click, and what came with it (build.ts admits
 * it).
 */
export interface BuildRequest {
  approval: Approval;
  /** `/build --fresh`: each step starts from the approved plan alone. */
  fresh: boolean;
  /** What the approver wrote with the approval (after `/build`'s ids and flags, or the review's body). */
  note?: BuildNote | undefined;
  /** The answer to the question the build stopped on. */
  answer?: Omit<QuestionAnswer, "question"> | undefined;
}

/**
 * An admitted build: everything its steps need, from the approval to where its commits go (workflow/build/run.ts and
 * workflow/build/steps.ts run it).
 */
export interface BuildRun {
  deps: WorkflowDeps;
  job: JobContext;
  request: BuildRequest;
  info: ThreadInfo;
  mirror: Mirror;
  config: RepoConfig;
  planComment: ThreadComment;
  state: ThreadState;
  plan: Plan;
  notes: string[];
  unticked: string[];
  status: BuildStatus;
  target: BuildTarget;
  /** The "Blueprint build" check run, told what verification found. */
  check?: BuildCheck | undefined;
  /**
   * A follow-up's F-steps (follow-up/): a question the agent asks ends its step as not done, and goes back to the
   * review thread as the reply; the build never waits for an answer.
   */
  followUp?: boolean | undefined;
}
