import { runAgent, type AgentLimits, type AgentOutcome } from "../agent/loop.js";
import { PLAN_SYSTEM_PROMPT, planningTaskMessage } from "../agent/prompts.js";
import type { RepoConfig } from "../config/repo-config.js";
import { findThreadState, renderPlanComment, renderStatusComment, type ThreadStateRecord } from "../github/plan-comment.js";
import { commentSeal, MARKER_PREFIX, threadSeal, type CommentSeal } from "../github/state-marker.js";
import { diffPlans, renderRevisionDiff } from "../plan/diff.js";
import { planHash } from "../plan/hash.js";
import type { Workspace } from "../workspace/workspace.js";
import { repoMinimumRefusal } from "./repo-permission.js";
import type { Plan } from "../plan/schema.js";
import { isWorkflowPath } from "../tools/paths.js";
import { prefetchRepoMap } from "../tools/repo-map/build-map.js";
import type { JobContext, WorkflowDeps } from "./deps.js";
import { memoryOf, withAnswer, withExplored, withFeedback, type ThreadMemory } from "./memory.js";
import type { ThreadComment, ThreadInfo } from "./ports.js";
import type { FeedbackEntry, QuestionAnswer, ThreadState } from "./state.js";
import { loadRepoConfig, loadThreadContext, trustChecker } from "./thread-context.js";
import { showingRetries, TrackingComment } from "./tracking-comment.js";
import { supersede } from "./supersede.js";
import { costCapFor, pricingFor, renderPlanCost, renderRunCost, type CostCap, type Pricing } from "./cost.js";
import { handedOver } from "./hand-over.js";

/**
 * A planning run handed to another worker (this one is shutting down) starts over there in a new
 * status comment: this one keeps no state marker, so the thread's state is as it was before the run.
 */
const HANDED_OVER = "⏸ Blueprint restarted while planning: another worker starts this plan over and posts it below. Nothing was changed.";

export type PlanTrigger =
  /** `/plan [instructions]`; with a plan already there it becomes a revision. */
  | { kind: "plan"; instructions: string }
  /** `/revise`, a "request changes" review, or a plain comment on a pending plan. */
  | { kind: "feedback"; feedback: Omit<FeedbackEntry, "onRevision"> }
  /** The answer to a question planning asked. */
  | { kind: "answer"; answer: Omit<QuestionAnswer, "question"> };

export interface PlanRequest {
  trigger: PlanTrigger;
  /** The comment that gave the command: excluded from the conversation the model sees. */
  commandCommentId?: number | undefined;
}

/** `/plan`, revisions and answers: explore read-only, then turn one status comment into a plan revision. */
export async function planThread(deps: WorkflowDeps, job: JobContext, request: PlanRequest): Promise<void> {
  const { port } = job;
  // 1. Where we stand: the current plan and the thread's memory.
  const comments = await port.comments();
  const seal = threadSeal(deps.stateKey, port);
  const lookup = findThreadState(comments, seal);
  const latest = lookup.kind === "found" ? lookup.latest : null;
  const current = lookup.kind === "found" ? lookup.plan : null;
  const resumed = request.trigger.kind === "answer" && latest?.state.status === "awaiting_answer" ? latest : null;
  // This job's own earlier run, whose process died mid-planning: its status comment is still the newest state.
  const takenOver = latest?.state.status === "planning" && latest.state.deliveryId === job.deliveryId ? latest : null;
  if (request.trigger.kind === "feedback" && !current?.state.plan) {
    // Only `/revise` is addressed to us when there is no plan; reviews and plain comments are not.
    if (request.trigger.feedback.source === "revise") await port.postComment("There is no plan to revise yet. Comment `/plan` first.");
    return;
  }
  // A taken-over run goes on with what its first run worked out (that memory already holds this command).
  const revision = takenOver ? takenOver.state.revision : resumed ? resumed.state.revision : current?.state.plan ? current.state.revision + 1 : 1;
  const memory = takenOver ? memoryOf(takenOver.state) : nextMemory(memoryOf(latest?.state), request.trigger, job.actor, current, resumed);

  // 2. The thread and the state this run writes.
  const info = await port.info();
  const state = initialState(info, port.repo.defaultBranch, memory, revision, job.deliveryId);

  // 3. One status comment, kept up to date (an answered question's comment is reused, and so is the
  //    comment of this job's run that died). A new one gets its state in an edit: the state is
  //    signed for the comment's id, which GitHub assigns.
  const heading = revision > 1 ? `## ⏳ Revising the plan (v${revision - 1} → v${revision})…` : "## ⏳ Planning…";
  // A first run of this delivery that died between posting its comment and signing it left it stateless: found by its delivery.
  const reused = resumed ?? takenOver ?? unsignedStatusComment(comments, job.deliveryId);
  const posted = reused ? { id: reused.comment.id, url: reused.comment.url } : await port.postComment(`${heading}\n\n${planningBody(job.actor, 0)}\n\n${postedFor(job.deliveryId)}`);
  const sealed = commentSeal(seal, posted.id);
  await port.updateComment(posted.id, renderStatusComment(state, sealed, heading, planningBody(job.actor, 0)));
  // Handed to another worker (see HANDED_OVER): a reused question comment gets its question back, so the answer resumes it there.
  const handedOverBody = resumed ? resumed.comment.body : HANDED_OVER;
  const tracking = new TrackingComment(port, posted.id, posted.url, deps.progressIntervalMs, (error) =>
    deps.log.warn({ err: error, deliveryId: job.deliveryId }, "could not update the tracking comment"),
  );

  let workspace: Workspace | null = null;
  let stopPrefetch: (() => Promise<void>) | undefined;
  try {
    // 4. A workspace at the right commit; configuration from the default branch.
    const ref = info.pullRequest ? `refs/pull/${info.number}/head` : `refs/heads/${port.repo.defaultBranch}`;
    const tree = await deps.repoCache.prepare({ cloneUrl: port.repo.cloneUrl, ref, token: () => port.gitToken() });
    workspace = tree;
    state.base.sha = info.pullRequest ? ((await tree.revParse(`refs/heads/${info.pullRequest.baseRef}`)) ?? "") : tree.baseSha;
    if (state.head) state.head.sha = tree.baseSha;
    const configRead = await loadRepoConfig((at, file) => tree.readAtRef(at, file), port.repo.defaultBranch);
    if (!configRead.ok) {
      await tracking.final(failedComment(state, sealed, configRead.message, "Fix the file on the default branch, then comment `/plan` again."));
      return;
    }
    const config = configRead.config;
    const refusal = await repoMinimumRefusal(port, job.actor, config);
    if (refusal) {
      await tracking.final(failedComment(state, sealed, refusal, "Ask someone with that access to comment `/plan`."));
      return;
    }
    // The model is told to call repo_map first: its tags are collected while the thread is read and the model answers.
    stopPrefetch = prefetchRepoMap(tree.dir, tree.tagCacheDir, job.signal);

    // 5. What the model is told: the request, the thread, and what earlier runs left behind.
    const context = await loadThreadContext(
      info,
      comments,
      trustChecker(port, config.min_permission ?? deps.minPermission),
      tree,
      new Set(request.commandCommentId ? [request.commandCommentId] : []),
    );
    const workflowsAllowed = await port.canWriteWorkflows();
    const task = planningTaskMessage({
      instructions: memory.instructions,
      requestedBy: memory.requestedBy,
      thread: context,
      repoInstructions: config.instructions,
      workflowsAllowed,
      memory: {
        previousPlan: current?.state.plan ? { revision: current.state.revision, plan: current.state.plan } : undefined,
        feedback: memory.feedback,
        answers: memory.answers,
        explored: memory.explored,
      },
    });

    // 6. The read-only run.
    const filesRead = new Set<string>();
    // A retried model request shows in the status comment until the model answers.
    const showProgress = (retry: string | null) => tracking.progress(renderStatusComment(state, sealed, heading, planningBody(job.actor, filesRead.size, retry)));
    const model = showingRetries((onRetry) => deps.modelFor(config, onRetry), showProgress);
    const outcome = await runAgent({
      model,
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
        // A repo_map call left behind by a cancelled run stops too: nothing reads the tree once it is removed.
        signal: job.signal,
        // repo_map ranks what the thread talks about (identifiers, paths) higher.
        repoMap: {
          tagCacheDir: tree.tagCacheDir,
          thread: [
            memory.instructions,
            context.title,
            context.body.text,
            ...context.comments.map((comment) => comment.text),
            ...memory.feedback.map((entry) => entry.text),
            current?.state.plan ? JSON.stringify(current.state.plan) : "",
          ].join("\n"),
        },
      },
      limits: limitsFor(deps.limits, config),
      redact: deps.redact,
      signal: job.signal,
      onProgress: () => showProgress(null),
    });
    if (handedOver(job.signal)) return await tracking.final(handedOverBody);
    Object.assign(state, withExplored(memory, filesRead));
    deps.telemetry?.modelUsage("plan", outcome.usage);

    // 7. Plan mode must leave the tree as it found it.
    const changed = await tree.changes();
    if (changed.length > 0) {
      deps.log.error({ deliveryId: job.deliveryId, changed }, "plan mode changed the working tree");
      await tracking.final(failedComment(state, sealed, `planning changed files in the working tree (${changed.slice(0, 5).join(", ")}), which plan mode must never do. The plan was discarded.`, "Comment `/plan` to try again."));
      return;
    }

    // 8. The result replaces the status comment; a new revision supersedes the old one.
    const result = outcome.kind === "plan_submitted" && !workflowsAllowed ? { ...outcome, plan: warnAboutWorkflows(outcome.plan) } : outcome;
    await tracking.final(deps.redact(resultComment(state, sealed, result, current, { pricing: pricingFor(deps, config, model.model), cap: costCapFor(deps, config, model.model) })));
    if (outcome.kind === "plan_submitted" && current && current.comment.id !== posted.id) {
      await supersede(port, seal, current, revision, deps.redact).catch((error) => deps.log.warn({ err: error }, "could not mark the previous plan superseded"));
    }
  } catch (error) {
    if (handedOver(job.signal)) return await tracking.final(handedOverBody);
    deps.log.error({ err: error, deliveryId: job.deliveryId }, "planning failed");
    await tracking.final(failedComment(state, sealed, plainError(error), "Comment `/plan` to try again; if it keeps failing, tell the app's operators."));
  } finally {
    // Nothing may read the tree once it is removed.
    await stopPrefetch?.();
    await workspace?.dispose().catch((error) => deps.log.warn({ err: error }, "could not remove a workspace"));
  }
}

/** Without the `workflows` permission, steps that touch workflows will be refused: say so in the plan up front. */
function warnAboutWorkflows(plan: Plan): Plan {
  const blocked = plan.steps.filter((step) => step.files.some((file) => isWorkflowPath(file.replace(/^\.\//, ""))));
  if (blocked.length === 0) return plan;
  const risk = `Blueprint cannot change files under .github/workflows/ on this installation (no "workflows" permission): ${blocked.map((step) => step.id).join(", ")} will be refused unless the permission is granted.`;
  return { ...plan, risks: [risk, ...plan.risks] };
}

function nextMemory(previous: ThreadMemory | null, trigger: PlanTrigger, actor: string, current: ThreadStateRecord | null, resumed: ThreadStateRecord | null): ThreadMemory {
  const base: ThreadMemory = previous ?? { instructions: "", requestedBy: actor, feedback: [], answers: [], explored: [] };
  const onRevision = current?.state.revision ?? 1;
  switch (trigger.kind) {
    case "plan":
      if (!current?.state.plan) return { ...base, instructions: trigger.instructions, requestedBy: actor, feedback: [], answers: previous ? base.answers : [] };
      return withFeedback(base, { author: actor, source: "plan", text: trigger.instructions || "(re-plan requested without new instructions)", onRevision });
    case "feedback":
      return withFeedback(base, { ...trigger.feedback, onRevision });
    case "answer":
      return withAnswer(base, { ...trigger.answer, question: resumed?.state.question ?? "(question)" });
  }
}

function initialState(info: ThreadInfo, defaultBranch: string, memory: ThreadMemory, revision: number, deliveryId: string): ThreadState {
  return {
    v: 1,
    status: "planning",
    deliveryId,
    revision,
    plan: null,
    planHash: null,
    ...memory,
    base: { branch: info.pullRequest?.baseRef ?? defaultBranch, sha: "" },
    head: info.pullRequest ? { ref: info.pullRequest.headRef, sha: info.pullRequest.headSha, sameRepo: info.pullRequest.sameRepo } : null,
    branch: null,
    steps: {},
    stale: null,
    question: null,
    questionMode: null,
    questionStep: null,
    approvedBy: null,
    approvals: [],
    buildNotes: [],
    changes: null,
    postedAt: null,
    error: null,
    pullRequest: null,
    updatedAt: new Date().toISOString(),
  };
}

function resultComment(state: ThreadState, seal: CommentSeal, outcome: AgentOutcome, previous: ThreadStateRecord | null, cost: { pricing: Pricing; cap: CostCap | undefined }): string {
  const usage = `<sub>${renderRunCost(outcome.usage, cost.pricing)}</sub>`;
  const now = new Date().toISOString();
  switch (outcome.kind) {
    case "plan_submitted": {
      const done: ThreadState = {
        ...state,
        status: "pending",
        plan: outcome.plan,
        planHash: planHash(outcome.plan),
        steps: Object.fromEntries(outcome.plan.steps.map((step) => [step.id, { status: "pending" as const }])),
        changes: previous?.state.plan ? renderRevisionDiff(diffPlans(previous.state.plan, outcome.plan), previous.state.revision) : null,
        postedAt: now,
        updatedAt: now,
      };
      return renderPlanComment(done, seal, { report: renderPlanCost(outcome.plan, outcome.usage, cost.pricing, cost.cap) });
    }
    case "question": {
      const waiting: ThreadState = { ...state, status: "awaiting_answer", question: outcome.question, questionMode: "plan", updatedAt: now };
      return renderStatusComment(
        waiting,
        seal,
        "## ❓ Blueprint has a question before it can finish the plan",
        `${outcome.question}\n\n**Answer in a comment** (anyone with write access); planning then resumes where it stopped. \`/cancel\` withdraws the question.\n\n${usage}`,
      );
    }
    case "failed":
      return failedComment(state, seal, `${outcome.message}.`, failureAdvice(outcome.failure), usage);
    default:
      return failedComment(state, seal, "the planning run ended without a plan.", "Comment `/plan` to try again.", usage);
  }
}

function failureAdvice(failure: string): string {
  switch (failure) {
    case "model":
      return "Nothing was changed. Check that the model endpoint is up and its settings are right (`OPENAI_BASE_URL` / `OPENAI_API_KEY` for the App; the Action's `openai-base-url` / `openai-api-key` inputs; the CLI's `--base-url` / `--api-key`), then comment `/plan` again.";
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

export function failedComment(state: ThreadState, seal: CommentSeal, reason: string, advice: string, extra = ""): string {
  const failed: ThreadState = { ...state, status: "failed", error: reason, updatedAt: new Date().toISOString() };
  return renderStatusComment(failed, seal, "## ❌ Planning failed", [`Blueprint could not make a plan: ${reason}`, `**What to do:** ${advice}`, extra].filter(Boolean).join("\n\n"));
}

/**
 * Written into a status comment as it is first posted, before its state is signed in by an edit (the
 * state is signed for the comment's id, which GitHub assigns): the delivery whose run posted it.
 */
function postedFor(deliveryId: string): string {
  return `<!-- blueprint:posted ${encodeURIComponent(deliveryId)} -->`;
}

/**
 * This installation's status comment that a run of `deliveryId` posted and never signed (its process
 * died in between): a comment of ours still as first posted, heading and all, with no state in it.
 */
function unsignedStatusComment(comments: ThreadComment[], deliveryId: string): { comment: ThreadComment } | null {
  const comment = comments.find((c) => c.own && /^## ⏳ (?:Planning|Revising the plan)/.test(c.body) && c.body.includes(postedFor(deliveryId)) && !c.body.includes(MARKER_PREFIX));
  return comment ? { comment } : null;
}

function planningBody(actor: string, filesRead: number, retry: string | null = null): string {
  const progress = `Planning for @${actor} — read ${filesRead} file${filesRead === 1 ? "" : "s"} so far. This comment turns into the plan when it is ready.`;
  return retry ? `${progress}\n\n${retry}` : progress;
}

/** The run's limits: the repository's `limits:` can only lower the App's own (a repository cannot buy itself more). */
export function limitsFor(base: AgentLimits, config: RepoConfig): AgentLimits {
  const lower = (own: number, asked: number | undefined) => (asked === undefined ? own : Math.min(own, asked));
  return {
    maxIterations: lower(base.maxIterations, config.limits.max_iterations),
    maxWallTimeMs: lower(base.maxWallTimeMs, config.limits.max_minutes === undefined ? undefined : config.limits.max_minutes * 60_000),
    maxTokens: lower(base.maxTokens, config.limits.max_tokens),
  };
}

export function plainError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.endsWith(".") ? message : `${message}.`;
}
