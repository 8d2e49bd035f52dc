import { runAgent, type AgentLimits, type AgentOutcome } from "../agent/loop.js";
import { PLAN_SYSTEM_PROMPT, planningTaskMessage } from "../agent/prompts.js";
import type { RepoConfig } from "../config/repo-config.js";
import { findThreadState, renderPlanComment, renderStatusComment, renderUsage } from "../github/plan-comment.js";
import { planHash } from "../plan/hash.js";
import type { Workspace } from "../workspace/workspace.js";
import type { JobContext, WorkflowDeps } from "./deps.js";
import type { ThreadInfo } from "./ports.js";
import type { ThreadState } from "./state.js";
import { loadRepoConfig, loadThreadContext, trustChecker } from "./thread-context.js";
import { TrackingComment } from "./tracking-comment.js";
import { supersede } from "./supersede.js";

export interface PlanRequest {
  instructions: string;
  /** The comment that gave the command: excluded from the conversation the model sees. */
  commandCommentId?: number | undefined;
}

/** `/plan`: explore read-only, then turn one status comment into the plan. */
export async function planThread(deps: WorkflowDeps, job: JobContext, request: PlanRequest): Promise<void> {
  const { port } = job;
  // 1. Where we stand: the previous revision, if any.
  const comments = await port.comments();
  const previous = findThreadState(comments);
  const previousRecord = previous.kind === "found" ? previous.latest : null;
  const revision = previousRecord?.state.plan ? previousRecord.state.revision + 1 : previousRecord?.state.revision ?? 1;

  // 2. The thread and the commit we plan on.
  const info = await port.info();
  const state: ThreadState = initialState(info, port.repo.defaultBranch, job.actor, request.instructions, revision);

  // 3. One status comment, kept up to date.
  const posted = await port.postComment(renderStatusComment(state, "## ⏳ Planning…", planningBody(job.actor, 0)));
  const tracking = new TrackingComment(port, posted.id, posted.url, deps.progressIntervalMs, (error) =>
    deps.log.warn({ err: error, deliveryId: job.deliveryId }, "could not update the tracking comment"),
  );

  let workspace: Workspace | null = null;
  try {
    // 4. A workspace at the right commit; configuration from the default branch.
    const ref = info.pullRequest ? `refs/pull/${info.number}/head` : `refs/heads/${port.repo.defaultBranch}`;
    const tree = await deps.repoCache.prepare({ cloneUrl: port.repo.cloneUrl, ref, token: await port.gitToken() });
    workspace = tree;
    const baseSha = info.pullRequest ? await resolveBranch(tree, info.pullRequest.baseRef) : tree.baseSha;
    state.base = { branch: info.pullRequest?.baseRef ?? port.repo.defaultBranch, sha: baseSha };
    if (state.head) state.head.sha = tree.baseSha;
    const configRead = await loadRepoConfig((at, file) => tree.readAtRef(at, file), port.repo.defaultBranch);
    if (!configRead.ok) {
      await tracking.final(failedComment(state, configRead.message, "Fix the file on the default branch, then comment `/plan` again."));
      return;
    }
    const config = configRead.config;

    // 5. What the model is told.
    const context = await loadThreadContext(
      info,
      comments,
      trustChecker(port, config.min_permission ?? deps.minPermission),
      tree,
      new Set(request.commandCommentId ? [request.commandCommentId] : []),
    );
    const task = planningTaskMessage({ instructions: request.instructions, requestedBy: job.actor, thread: context, repoInstructions: config.instructions });

    // 6. The read-only run.
    const filesRead = new Set<string>();
    const outcome = await runAgent({
      model: deps.modelFor(config),
      messages: [
        { role: "system", content: PLAN_SYSTEM_PROMPT },
        { role: "user", content: task },
      ],
      context: {
        root: tree.dir,
        mode: "plan",
        runner: deps.runner,
        filesRead,
        audit: [],
        allowWorkflowWrites: false,
      },
      limits: limitsFor(deps.limits, config),
      redact: deps.redact,
      signal: job.signal,
      onProgress: (progress) =>
        tracking.progress(renderStatusComment(state, "## ⏳ Planning…", planningBody(job.actor, progress.filesRead))),
    });

    // 7. Plan mode must leave the tree as it found it.
    const changed = await tree.changes();
    if (changed.length > 0) {
      deps.log.error({ deliveryId: job.deliveryId, changed }, "plan mode changed the working tree");
      await tracking.final(failedComment(state, `planning changed files in the working tree (${changed.slice(0, 5).join(", ")}), which plan mode must never do. The plan was discarded.`, "Comment `/plan` to try again."));
      return;
    }

    // 8. The result replaces the status comment.
    await tracking.final(deps.redact(resultComment(state, outcome, [...filesRead])));
    if (outcome.kind === "plan_submitted" && previousRecord?.state.plan) await supersede(port, previousRecord, deps.redact);
  } catch (error) {
    deps.log.error({ err: error, deliveryId: job.deliveryId }, "planning failed");
    await tracking.final(failedComment(state, plainError(error), "Comment `/plan` to try again; if it keeps failing, tell the app's operators."));
  } finally {
    await workspace?.dispose().catch((error) => deps.log.warn({ err: error }, "could not remove a workspace"));
  }
}

function initialState(info: ThreadInfo, defaultBranch: string, actor: string, instructions: string, revision: number): ThreadState {
  return {
    v: 1,
    status: "planning",
    revision,
    plan: null,
    planHash: null,
    requestedBy: actor,
    instructions,
    base: { branch: info.pullRequest?.baseRef ?? defaultBranch, sha: "" },
    head: info.pullRequest ? { ref: info.pullRequest.headRef, sha: info.pullRequest.headSha, sameRepo: info.pullRequest.sameRepo } : null,
    branch: null,
    steps: {},
    stale: null,
    question: null,
    error: null,
    pullRequest: null,
    explored: [],
    updatedAt: new Date().toISOString(),
  };
}

function resultComment(state: ThreadState, outcome: AgentOutcome, explored: string[]): string {
  const usage = `<sub>${renderUsage(outcome.usage)}</sub>`;
  switch (outcome.kind) {
    case "plan_submitted": {
      const done: ThreadState = {
        ...state,
        status: "pending",
        plan: outcome.plan,
        planHash: planHash(outcome.plan),
        steps: Object.fromEntries(outcome.plan.steps.map((step) => [step.id, { status: "pending" as const }])),
        explored: explored.slice(0, 200),
        updatedAt: new Date().toISOString(),
      };
      return renderPlanComment(done, { report: usage });
    }
    case "question": {
      const waiting: ThreadState = { ...state, status: "awaiting_answer", question: outcome.question, updatedAt: new Date().toISOString() };
      return renderStatusComment(
        waiting,
        "## ❓ Blueprint has a question before it can plan",
        `${outcome.question}\n\nAnswer in a comment; then comment \`/plan\` with the answer to continue.\n\n${usage}`,
      );
    }
    case "failed":
      return failedComment(state, `${outcome.message}.`, failureAdvice(outcome.failure), usage);
    default:
      return failedComment(state, "the planning run ended without a plan.", "Comment `/plan` to try again.", usage);
  }
}

function failureAdvice(failure: string): string {
  switch (failure) {
    case "model":
      return "Nothing was changed. Check that the model endpoint is up (the app's `OPENAI_BASE_URL` / `OPENAI_API_KEY`), then comment `/plan` again.";
    case "iterations":
    case "wall_time":
    case "tokens":
      return "Nothing was changed. Comment `/plan` with narrower instructions, or raise the limits in `.github/blueprint.yml`.";
    case "cancelled":
      return "Comment `/plan` to start again.";
    default:
      return "Nothing was changed. Comment `/plan` to try again.";
  }
}

export function failedComment(state: ThreadState, reason: string, advice: string, extra = ""): string {
  const failed: ThreadState = { ...state, status: "failed", error: reason, updatedAt: new Date().toISOString() };
  return renderStatusComment(failed, "## ❌ Planning failed", [`Blueprint could not make a plan: ${reason}`, `**What to do:** ${advice}`, extra].filter(Boolean).join("\n\n"));
}

function planningBody(actor: string, filesRead: number): string {
  return `Planning for @${actor} — read ${filesRead} file${filesRead === 1 ? "" : "s"} so far. This comment turns into the plan when it is ready.`;
}

export function limitsFor(base: AgentLimits, config: RepoConfig): AgentLimits {
  return {
    maxIterations: config.limits.max_iterations ?? base.maxIterations,
    maxWallTimeMs: config.limits.max_minutes ? config.limits.max_minutes * 60_000 : base.maxWallTimeMs,
    maxTokens: config.limits.max_tokens ?? base.maxTokens,
  };
}

async function resolveBranch(workspace: Workspace, branch: string): Promise<string> {
  return (await workspace.revParse(`refs/heads/${branch}`)) ?? "";
}

export function plainError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.endsWith(".") ? message : `${message}.`;
}
