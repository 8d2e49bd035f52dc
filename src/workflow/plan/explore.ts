import { runAgent, type AgentOutcome } from "../../agent/loop.js";
import type { ModelClient } from "../../agent/model.js";
import {
  PLAN_SYSTEM_PROMPT,
  planningTaskMessage,
  type RepoInstructions,
  type ThreadContext,
} from "../../agent/prompts.js";
import type { RepoConfig } from "../../config/repo-config.js";
import type { ThreadStateRecord } from "../../github/plan-comment.js";
import type { Workspace } from "../../workspace/workspace.js";
import type { JobContext, WorkflowDeps } from "../deps.js";
import { limitsFor } from "../limits.js";
import type { ThreadMemory } from "../memory.js";
import type { PlanStatus } from "./status.js";
import type { ThreadComment, ThreadInfo } from "../ports.js";
import { readRepoInstructions } from "../repo-instructions.js";
import { loadThreadContext, trustChecker } from "../thread-context.js";
import { showingRetries } from "../surfaces/index.js";

export interface Exploration {
  tree: Workspace;
  config: RepoConfig;
  info: ThreadInfo;
  comments: ThreadComment[];
  memory: ThreadMemory;
  /** The plan this run revises. */
  current: ThreadStateRecord | null;
  /** The comment that gave the command: excluded from the conversation the model sees. */
  commandCommentId?: number | undefined;
  status: PlanStatus;
}

export interface Explored {
  outcome: AgentOutcome;
  filesRead: Set<string>;
  workflowsAllowed: boolean;
  model: ModelClient;
}

/** What the model is told (the request, the thread, and what earlier runs left behind), and its read-only run. */
export async function explore(deps: WorkflowDeps, job: JobContext, input: Exploration): Promise<Explored> {
  const { tree, config, memory, current, status } = input;
  const context = await loadThreadContext(
    input.info,
    input.comments,
    trustChecker(job.port, config.min_permission ?? deps.minPermission),
    tree,
    new Set(input.commandCommentId ? [input.commandCommentId] : []),
  );
  const workflowsAllowed = await job.port.canWriteWorkflows();
  // The default branch's AGENTS.md, never a pull request's own version of it.
  const defaultRef = `refs/heads/${job.port.repo.defaultBranch}`;
  const agentInstructions = await readRepoInstructions(
    (file) => tree.readAtRef(defaultRef, file),
    [],
    (files) => tree.filesAtRef(defaultRef, files),
  );
  const filesRead = new Set<string>();
  // A retried model request shows in the status comment until the model answers.
  const showProgress = (retry: string | null) => status.tracking.progress(status.progress(filesRead.size, retry));
  const model = showingRetries((onRetry) => deps.modelFor(config, onRetry), showProgress);
  const outcome = await runAgent({
    model,
    messages: [
      { role: "system", content: PLAN_SYSTEM_PROMPT },
      { role: "user", content: planningTask(input, context, workflowsAllowed, agentInstructions) },
    ],
    context: {
      root: tree.dir,
      mode: "plan",
      runner: deps.runner,
      filesRead,
      audit: [],
      allowWorkflowWrites: false,
      // A repo_map call left behind by a cancelled run stops too: nothing reads the tree once it is removed.
      signal: job.signal,
      // repo_map ranks what the thread talks about (identifiers, paths) higher.
      repoMap: { tagCacheDir: tree.tagCacheDir, thread: threadText(memory, context, current) },
    },
    limits: limitsFor(deps.limits, config),
    redact: deps.redact,
    signal: job.signal,
    onProgress: () => showProgress(null),
  });
  return { outcome, filesRead, workflowsAllowed, model };
}

function planningTask(
  input: Exploration,
  context: ThreadContext,
  workflowsAllowed: boolean,
  agentInstructions: RepoInstructions,
): string {
  const { memory, current } = input;
  return planningTaskMessage({
    instructions: memory.instructions,
    requestedBy: memory.requestedBy,
    thread: context,
    repoInstructions: input.config.instructions,
    agentInstructions,
    workflowsAllowed,
    memory: {
      previousPlan: current?.state.plan ? { revision: current.state.revision, plan: current.state.plan } : undefined,
      feedback: memory.feedback,
      answers: memory.answers,
      explored: memory.explored,
    },
  });
}

/** What the thread talks about, for repo_map's ranking. */
function threadText(memory: ThreadMemory, context: ThreadContext, current: ThreadStateRecord | null): string {
  return [
    memory.instructions,
    context.title,
    context.body.text,
    ...context.comments.map((comment) => comment.text),
    ...memory.feedback.map((entry) => entry.text),
    current?.state.plan ? JSON.stringify(current.state.plan) : "",
  ].join("\n");
}
