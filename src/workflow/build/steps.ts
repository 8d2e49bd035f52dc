import { formatDollars } from "../../agent/cost.js";
import type { TokenUsage } from "../../shared/model-usage.js";
import type { PlanStep } from "../../plan/schema.js";
import type { JobNetwork } from "../../workspace/egress-proxy.js";
import type { CommitResult, Workspace } from "../../workspace/workspace.js";
import { costCapReason, spentOfCap, type BuildLedger } from "./ledger.js";
import { openBuildNetwork } from "./network.js";
import { blockedStatusLine, keepUnfinishedWork } from "./outcome.js";
import type { BuildRun } from "./request.js";
import { runBuildSetup, dependenciesParagraph } from "./setup.js";
import { doneSteps, MAX_KEPT_SUMMARY } from "./done-steps.js";
import { readRepoInstructions } from "../repo-instructions.js";
import { buildStep, Cancelled, type StepResult } from "./step.js";
import { PLAN_TRAILER } from "./target.js";
import { addUsage } from "../cost.js";
import { plainError } from "../plain-error.js";
import { writtenFilesApproval, type WrittenFilesApproval } from "../approval/index.js";

/** The steps to build on one worktree: `revision` is the plan revision's trailer for their commits. */
export interface StepsToBuild {
  tree: Workspace;
  todo: PlanStep[];
  revision: string;
}

interface StepsInProgress extends StepsToBuild {
  allowWorkflowWrites: boolean;
  written: WrittenFilesApproval;
  network: JobNetwork;
  /** What each step's first message says of the build's dependencies and tests. */
  dependencies: string;
}

/** Every step built (on `network`), or the build stopped on one, its state saved. */
export type StepsOutcome = { done: true; network: JobNetwork } | { done: false };

/** One agent run, one commit, one push, one tick per step. */
export async function buildSteps(run: BuildRun, ledger: BuildLedger, steps: StepsToBuild): Promise<StepsOutcome> {
  const { deps, job, config, plan, state, notes, planComment, status } = run;
  const { tree, todo } = steps;
  const allowWorkflowWrites = await job.port.canWriteWorkflows();
  const written = await writtenFilesApproval({
    port: job.port,
    config,
    plan,
    state,
    mirror: run.mirror,
    tree,
    planCommentId: planComment.id,
    notes,
  });
  // One network for all the build's commands: its allow-list proxy, and its count of refusals.
  const network = await openBuildNetwork(deps, config, notes);
  ledger.network = network;
  // The repository's setup, or its lock files' frozen installs, once before the first step (workflow/build/setup.ts).
  const dependencies =
    steps.todo.length > 0 ? dependenciesParagraph(await runBuildSetup(run, ledger, tree, network)) : "";
  const progress: StepsInProgress = { ...steps, allowWorkflowWrites, written, network, dependencies };
  for (const [index, step] of todo.entries()) {
    if (job.signal.aborted) throw new Cancelled();
    if (await stoppedAtCostCap(run, ledger, todo.slice(index))) return { done: false };
    if (
      (await buildOneStep(
        run,
        ledger,
        progress,
        step,
        `> ⏳ **Building ${step.id} (${index + 1} of ${todo.length})…**`,
      )) === "stopped"
    )
      return { done: false };
    await status.save(
      index + 1 < todo.length
        ? `> ⏳ **Building ${todo[index + 1]?.id} (${index + 2} of ${todo.length})…**`
        : "> ⏳ **Verifying…**",
    );
  }
  return { done: true, network };
}

/** The cost cap is checked between steps too: everything built so far is committed and pushed. */
async function stoppedAtCostCap(run: BuildRun, ledger: BuildLedger, left: PlanStep[]): Promise<boolean> {
  const { budget } = ledger;
  if (!budget) return false;
  const spent = spentOfCap(ledger, budget);
  if (spent < budget.dollars) return false;
  const ids = left.map((next) => next.id);
  run.state.status = "failed";
  run.state.error = `${costCapReason(budget)} (${formatDollars(spent)} spent); ${ids.join(", ")} not built yet.`;
  run.notes.push(
    `💰 **Cost cap hit:** this build spent ${formatDollars(spent)} of its ${formatDollars(budget.dollars)}${budget.earlier ? ` (${budget.earlier.by} ${formatDollars(budget.earlier.dollars)} of it)` : ""} and stopped before ${ids[0]}. Everything built is pushed; each \`/build\` may spend up to ${formatDollars(budget.dollars)} and resumes at the first step not done.`,
  );
  await run.status.save(undefined, ledger.report());
  return true;
}

async function buildOneStep(
  run: BuildRun,
  ledger: BuildLedger,
  steps: StepsInProgress,
  step: PlanStep,
  statusLine: string,
): Promise<"built" | "stopped"> {
  const { state } = run;
  // 1. A step held for its code owners' approval pushes the commit it kept instead of being built again.
  const reused = await steps.written.reuseHeld(step);
  const earlier = state.steps[step.id]?.usage;
  state.steps[step.id] = { status: "building", ...(earlier ? { usage: earlier } : {}) };
  await run.status.save(statusLine);
  // 2. The agent run (skipped for a held commit), counted into the build's usage and the step's.
  const started = Date.now();
  const result: StepResult = reused
    ? { ok: true, summary: "", usage: { prompt: 0, completion: 0, cached: 0, requests: 0 } }
    : await runStepAgent(run, ledger, steps, step);
  run.deps.telemetry?.stepSeconds((Date.now() - started) / 1000);
  run.deps.telemetry?.modelUsage("build", result.usage);
  addUsage(ledger.usage, result.usage);
  const stepUsage = { prompt: 0, completion: 0, cached: 0, requests: 0, ...earlier };
  addUsage(stepUsage, result.usage);
  // 3. A step not done stops the build; what it changed is kept.
  if (result.ok !== true) {
    await keepUnfinished(run, steps, step, result);
    await stopOnUnfinished(run, ledger, step, result, stepUsage);
    return "stopped";
  }
  // 4. Its commit, checked and pushed.
  const commit =
    reused ??
    (await steps.tree.commitAll(
      `${step.id}: ${step.title}\n\n${result.summary}\n\n${PLAN_TRAILER}: ${steps.revision}`,
      run.config.commit_author ?? run.deps.identity,
    ));
  if (!commit) {
    state.steps[step.id] = {
      status: "done",
      usage: stepUsage,
      ...(result.summary ? { summary: result.summary.slice(0, MAX_KEPT_SUMMARY) } : {}),
    };
    return "built";
  }
  return pushStep(run, ledger, steps, step, commit, stepUsage);
}

/** What is left of the build's cost cap goes with the step's agent run. */
async function runStepAgent(
  run: BuildRun,
  ledger: BuildLedger,
  steps: StepsInProgress,
  step: PlanStep,
): Promise<StepResult> {
  const { deps, job, plan, state, config, request } = run;
  const { budget } = ledger;
  const costCap = budget
    ? { dollars: budget.dollars - spentOfCap(ledger, budget), price: budget.price, reason: costCapReason(budget) }
    : undefined;
  const done = await doneSteps(plan.steps, state, steps.tree);
  // The default branch's AGENTS.md for the step's files, never the build branch's or a pull request's own.
  const defaultRef = `refs/heads/${job.port.repo.defaultBranch}`;
  const agentInstructions = await readRepoInstructions(
    (file) => run.mirror.readFile(defaultRef, file),
    step.files,
    (files) => run.mirror.filesAt(defaultRef, files),
  );
  return buildStep(deps, job, {
    plan,
    step,
    tree: steps.tree,
    state,
    config,
    fresh: request.fresh,
    audit: ledger.audit,
    allowWorkflowWrites: steps.allowWorkflowWrites,
    network: steps.network,
    dependencies: steps.dependencies,
    costCap,
    showRetry: run.status.showRetry,
    done,
    agentInstructions,
  });
}

type UnfinishedResult = Exclude<StepResult, { ok: true }>;

/** Not done, so not ticked: what the step changed goes in a labelled WIP commit that the report points to. */
async function keepUnfinished(
  run: BuildRun,
  steps: StepsInProgress,
  step: PlanStep,
  result: UnfinishedResult,
): Promise<void> {
  const { deps, job, config, state } = run;
  const kept = await keepUnfinishedWork(steps.tree, step, result, {
    branch: run.target.branch,
    token: await job.port.gitToken(),
    identity: config.commit_author ?? deps.identity,
    redact: deps.redact,
    mayPush: (sha) => steps.written.unfinishedRefusal(step, sha),
  });
  if (kept.sha && state.head) state.head.sha = kept.sha;
  if (kept.note) run.notes.push(kept.note);
}

/** A question waits for an answer; a blocked or failed step fails the build. */
async function stopOnUnfinished(
  run: BuildRun,
  ledger: BuildLedger,
  step: PlanStep,
  result: UnfinishedResult,
  usage: TokenUsage,
): Promise<void> {
  const { deps, state, status } = run;
  if (result.ok === "question" && run.followUp) result = { ok: "blocked", reason: result.question, usage };
  if (result.ok === "question") {
    state.steps[step.id] = { status: "pending", usage };
    state.status = "awaiting_answer";
    state.question = result.question;
    state.questionMode = "build";
    state.questionStep = step.id;
    await status.save(
      `> ❓ **Waiting for an answer** before building ${step.id}: see the question below. Answer in a comment to resume.`,
      ledger.report(),
    );
    await run.job.port.postComment(
      deps.redact(
        `❓ **Blueprint has a question while building ${step.id} (${step.title}):**\n\n${result.question}\n\nAnswer in a comment (anyone with write access) and the build resumes at ${step.id}; \`/cancel\` withdraws the question.`,
      ),
    );
    return;
  }
  if (result.ok === "blocked") {
    state.steps[step.id] = { status: "failed", reason: `blocked: ${result.reason}`, usage };
    state.status = "failed";
    state.error = `${step.id} is blocked: ${result.reason}`;
    await status.save(blockedStatusLine(step, result.reason), ledger.report());
    return;
  }
  state.steps[step.id] = { status: "failed", reason: result.reason, usage };
  state.status = "failed";
  state.error = `${step.id} failed: ${result.reason}`;
  await status.save(undefined, ledger.report());
}

/**
 * What the commit changed, before it is pushed: code owners' approvals, and files outside the plan. Then the push and
 * the tick.
 */
async function pushStep(
  run: BuildRun,
  ledger: BuildLedger,
  steps: StepsInProgress,
  step: PlanStep,
  commit: CommitResult,
  usage: TokenUsage,
): Promise<"built" | "stopped"> {
  const { deps, job, state, status } = run;
  const verdict = await steps.written.check(step, commit, usage);
  if (verdict.held) {
    await status.save(verdict.held.statusLine, ledger.report());
    await job.port.postComment(deps.redact(verdict.held.comment));
    return "stopped";
  }
  try {
    // The token as it is now: a long build may have had it renewed since the build began.
    await steps.tree.push(run.target.branch, await job.port.gitToken());
  } catch (error) {
    state.steps[step.id] = { status: "failed", reason: plainError(error), usage };
    state.status = "failed";
    state.error = `${step.id}: ${plainError(error)}`;
    await status.save(undefined, ledger.report());
    return "stopped";
  }
  await steps.written.pushed(step);
  if (state.head) state.head.sha = commit.sha;
  state.steps[step.id] = {
    status: "done",
    commit: commit.sha,
    commitUrl: job.port.commitUrl(commit.sha),
    usage,
    ...(verdict.outsidePlan ? { outsidePlan: verdict.outsidePlan } : {}),
  };
  return "built";
}
