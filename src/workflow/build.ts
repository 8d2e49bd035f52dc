import type { TokenUsage } from "../agent/model.js";
import type { RepoConfig } from "../config/repo-config.js";
import { renderPlanComment } from "../github/plan-comment.js";
import { commentSeal, threadSeal } from "../github/state-marker.js";
import { withDependencies, buildOrder } from "../plan/order.js";
import type { Plan } from "../plan/schema.js";
import type { AuditEntry } from "../tools/tool.js";
import type { Workspace } from "../workspace/workspace.js";
import type { Mirror } from "../workspace/repo-cache.js";
import { checkApproval, editedAfterApproval, type Approval } from "./approval.js";
import { failedChecks, renderBuildReport, sandboxNotes, type VerificationResult } from "./build-report.js";
import { addUsage, costCapFor, pricingFor, type Pricing } from "./cost.js";
import { costOf, formatDollars, type ModelPrice } from "../agent/cost.js";
import type { JobContext, WorkflowDeps } from "./deps.js";
import { limitsFor, plainError } from "./plan.js";
import type { ThreadInfo } from "./ports.js";
import type { BuildNote, QuestionAnswer, ThreadState } from "./state.js";
import { withAnswer, memoryOf } from "./memory.js";
import { loadRepoConfig } from "./thread-context.js";
import { repoMinimumRefusal } from "./repo-permission.js";
import { codeOwnersRefusal } from "./codeowners-approval.js";
import { buildNoteLines, recordBuildNote } from "./build-notes.js";
import { applyHandEdits } from "./hand-edits.js";
import { handedOver } from "./hand-over.js";
import { buildStep, Cancelled, verify, VERIFY_TIMEOUT_MS, type StepResult } from "./build-step.js";
import { TrackingComment } from "./tracking-comment.js";
import { blockedStatusLine, describeChecks, handOver, keepUnfinishedWork } from "./build-outcome.js";
import { fillPullRequestTemplate } from "./pr-template.js";
import { networkReportLines, openBuildNetwork } from "./build-network.js";
import type { JobNetwork } from "../workspace/egress-proxy.js";
import { dropApprovalsBefore, recordApproval } from "./recorded-approvals.js";
import { describeApprovals } from "./code-owner-coverage.js";
import { writtenFilesApproval } from "./written-files-approval.js";

export interface BuildRequest {
  approval: Approval;
  /** `/build --fresh`: each step starts from the approved plan alone. */
  fresh: boolean;
  /** What the approver wrote with the approval (after `/build`'s ids and flags, or the review's body). */
  note?: BuildNote | undefined;
  /** The answer to the question the build stopped on. */
  answer?: Omit<QuestionAnswer, "question"> | undefined;
}

/** `/build` or an approving review: build the latest plan step by step on Blueprint's branch. */
export async function buildThread(deps: WorkflowDeps, job: JobContext, request: BuildRequest): Promise<void> {
  const { port } = job;
  // 1. Is the approval valid? (Checked before touching the repository: an invalid one starts nothing.)
  const [comments, info] = await Promise.all([port.comments(), port.info()]);
  const seal = threadSeal(deps.stateKey, port);
  const check = checkApproval(comments, info, { ...request.approval, resuming: request.answer !== undefined }, seal);
  if (!check.ok) {
    if (!check.silent) await port.postComment(check.reason);
    return;
  }

  // 2. The repository and its configuration (default branch only).
  const mirror = await deps.repoCache.sync({ cloneUrl: port.repo.cloneUrl, ref: info.pullRequest ? `refs/pull/${info.number}/head` : `refs/heads/${port.repo.defaultBranch}`, token: () => port.gitToken() });
  const configRead = await loadRepoConfig((ref, file) => mirror.readFile(ref, file), port.repo.defaultBranch);
  if (!configRead.ok) {
    await port.postComment(`${configRead.message}\n\nFix the file on the default branch, then comment \`/build\` again.`);
    return;
  }
  const config = configRead.config;
  const refusal = await repoMinimumRefusal(port, request.approval.approver, config);
  if (refusal) {
    await port.postComment(refusal);
    return;
  }
  if (config.require_other_approver && request.approval.approver === check.record.state.requestedBy) {
    await port.postComment(`This repository requires someone other than the plan's requester (@${check.record.state.requestedBy}) to approve it.`);
    return;
  }
  const planComment = check.record.comment;
  let state: ThreadState = structuredClone(check.record.state);
  const notes: string[] = sandboxNotes(deps.runner.isolation);
  // A maintainer may have edited the plan comment: build it as it now reads.
  const edits = applyHandEdits(planComment.body, state);
  if (edits.kind === "broken") {
    await port.postComment(`The plan comment was edited in a way Blueprint cannot build:\n- ${edits.errors.join("\n- ")}\n\nFix the edit (or comment \`/plan\` for a fresh plan), then comment \`/build\` again.`);
    return;
  }
  const unticked = edits.kind === "edited" ? edits.unticked : [];
  if (edits.kind === "edited") {
    // An approval covers the plan as the approver saw it, not an edit made after it.
    const unseen = editedAfterApproval(comments, planComment, { ...request.approval, resuming: request.answer !== undefined });
    if (unseen) {
      await port.postComment(unseen);
      return;
    }
    state = edits.state;
    // Approvals given before the edit did not see it.
    dropApprovalsBefore(state, planComment.updatedAt);
    notes.push(`Built the plan as edited by hand: ${edits.notes.join(" ")}`);
  }
  const plan = state.plan;
  if (!plan) return;
  const render = (statusLine?: string, report?: string) =>
    deps.redact(renderPlanComment({ ...state, updatedAt: new Date().toISOString() }, commentSeal(seal, planComment.id), { ...(statusLine ? { statusLine } : {}), ...(report ? { report } : {}) }));
  // Every valid approval of the revision is recorded, so code owners' approvals add up (an answer resumes on those already given).
  if (request.answer === undefined) recordApproval(state, comments, request.approval);
  // With `approvers: codeowners`, each owned file the steps list needs an owner's approval (checked on the plan as it now reads; what a step writes is checked before its push).
  const readDefaultBranch = (file: string) => mirror.readFile(`refs/heads/${port.repo.defaultBranch}`, file);
  const notOwner = await codeOwnersRefusal(port, config, { approver: request.approval.approver, plan, state, steps: request.approval.steps, readDefaultBranch });
  if (notOwner) {
    // Kept in the plan comment's state, the approval adds up with the next owner's.
    await port.updateComment(planComment.id, render(`> 🔏 **Waiting for more code owners:** approved so far by ${describeApprovals(state.approvals)}; see the reply below for the files that still need an owner's approval.`));
    await port.postComment(notOwner);
    return;
  }
  if (request.answer && state.status === "awaiting_answer") {
    const memory = memoryOf(state);
    if (memory) Object.assign(state, withAnswer(memory, { ...request.answer, question: state.question ?? "(question)" }));
    state.question = null;
    state.questionMode = null;
    state.questionStep = null;
  }
  state.approvedBy = request.approval.approver;
  recordBuildNote(state, request.note);
  notes.push(...buildNoteLines(state.buildNotes));
  // The plan comment is the build's status comment: saves go out at once and in order; a model
  // retry shows under the status line (a throttled edit) until the model answers again.
  const tracking = new TrackingComment(port, planComment.id, planComment.url, deps.progressIntervalMs, (error) =>
    deps.log.warn({ err: error, deliveryId: job.deliveryId }, "could not update the plan comment"),
  );
  let statusNow: string | undefined;
  const save = (statusLine?: string, report?: string) => {
    statusNow = statusLine;
    return tracking.write(render(statusLine, report));
  };
  const showRetry = (retryLine: string | null) => tracking.progress(render(retryLine && statusNow ? `${statusNow}\n>\n> ${retryLine}` : statusNow));

  // 3. A plan is stale when the base moved under the files it names.
  const stale = await baseMovedUnderPlan(mirror, state);
  if (stale && !request.approval.force) {
    state.stale = stale;
    await save();
    await port.postComment(`The plan is stale: ${stale} Comment \`/plan\` to re-plan on the current base, or \`/build --force\` to build it anyway.`);
    return;
  }

  // 4. Where the commits go: our own branch, or a same-repository PR head; never a fork or the default branch.
  //    Always computed from the thread and the configuration, never taken from the hidden state.
  const target = buildTarget(info, config, port.repo.defaultBranch);
  if (typeof target === "string") {
    await port.postComment(target);
    return;
  }
  if (state.branch && state.branch !== target.branch && Object.values(state.steps).some((step) => step.status === "done")) {
    await port.postComment(`This plan was partly built on \`${state.branch}\`, but its branch is now \`${target.branch}\` (did \`branch_prefix\` change?). Blueprint only builds on the branch it computes: restore the setting, or comment \`/plan\` for a fresh plan.`);
    return;
  }

  // 5. Which steps: all not done, or the named ones and what they need.
  const wanted = request.approval.steps.length > 0 ? withDependencies(plan, request.approval.steps) : buildOrder(plan);
  const usage: TokenUsage = { prompt: 0, completion: 0, cached: 0, requests: 0 };
  const audit: AuditEntry[] = [];
  const { maxWallTimeMs } = limitsFor(deps.limits, config);
  const pricing = pricingFor(deps, config, deps.modelFor(config).model);
  const budget = costBudget(deps, config, pricing, notes);
  let network: JobNetwork | null = null;
  const buildReport = (verification: VerificationResult[] = []) => renderBuildReport({ plan, state, verification, audit, usage, pricing, notes: [...notes, ...networkReportLines(network)] });
  let workspace: Workspace | null = null;

  try {
    // 6. A worktree at the branch tip if it exists (resume), else at the recorded base.
    const existing = await mirror.resolve(`refs/heads/${target.branch}`);
    const start = existing ?? (state.head?.sha || state.base.sha);
    const tree = await mirror.checkout(start);
    workspace = tree;
    state.status = "building";
    state.branch = target.branch;
    state.error = null;
    const revision = planRevisionTrailer(planComment.id, state.revision);
    if (existing && existing !== state.base.sha && !state.head) {
      recoverPushedSteps(state, plan, await tree.commitsBetween(state.base.sha, existing, PLAN_TRAILER), { revision, unticked, commitUrl: (sha) => port.commitUrl(sha) });
    }

    const todo = wanted.filter((step) => state.steps[step.id]?.status !== "done");
    const skipped = wanted.filter((step) => state.steps[step.id]?.status === "done").map((step) => step.id);
    if (skipped.length > 0) notes.push(`Already done, skipped: ${skipped.join(", ")}.`);
    await save(`> ⏳ **Building ${todo[0]?.id ?? "…"} (1 of ${todo.length})…**`);

    // 7. One agent run, one commit, one push, one tick per step.
    const allowWorkflowWrites = await port.canWriteWorkflows();
    const written = await writtenFilesApproval({ port, config, plan, state, mirror, tree, planCommentId: planComment.id, notes });
    // One network for all the build's commands: its allow-list proxy, and its count of refusals.
    network = await openBuildNetwork(deps, config, notes);
    // The repository's own setup (e.g. `npm ci`) runs once before the steps, like any agent command.
    if (config.setup && todo.length > 0) {
      // Like an agent run, it never outlasts the wall-time limit.
      const setup = await deps.runner.run(config.setup, { cwd: tree.dir, network, signal: job.signal, timeoutMs: Math.min(VERIFY_TIMEOUT_MS, maxWallTimeMs) });
      audit.push({ action: "command", target: config.setup, exitCode: setup.exitCode, detail: "setup" });
      await tree.ignoreUntracked();
      if (setup.exitCode !== 0) notes.push(`The setup command \`${config.setup}\` exited ${setup.exitCode ?? "killed"}; building anyway.`);
    }
    for (const [index, step] of todo.entries()) {
      if (job.signal.aborted) throw new Cancelled();
      // The cost cap is checked between steps too: everything built so far is committed and pushed.
      const spent = budget ? costOf(usage, budget.price) : 0;
      if (budget && spent >= budget.dollars) {
        const left = todo.slice(index).map((next) => next.id);
        state.status = "failed";
        state.error = `the build reached its cost cap of ${formatDollars(budget.dollars)} (${formatDollars(spent)} spent); ${left.join(", ")} not built yet.`;
        notes.push(`💰 **Cost cap hit:** this build spent ${formatDollars(spent)} of its ${formatDollars(budget.dollars)} and stopped before ${left[0]}. Everything built is pushed; each \`/build\` may spend up to ${formatDollars(budget.dollars)} and resumes at the first step not done.`);
        await save(undefined, buildReport());
        return;
      }
      // A step held for its code owners' approval pushes the commit it kept instead of being built again.
      const reused = await written.reuseHeld(step);
      const earlier = state.steps[step.id]?.usage;
      state.steps[step.id] = { status: "building", ...(earlier ? { usage: earlier } : {}) };
      await save(`> ⏳ **Building ${step.id} (${index + 1} of ${todo.length})…**`);
      const costCap = budget ? { dollars: budget.dollars - spent, price: budget.price, reason: `the build reached its cost cap of ${formatDollars(budget.dollars)}` } : undefined;
      const started = Date.now();
      const result: StepResult = reused ? { ok: true, summary: "", usage: { prompt: 0, completion: 0, cached: 0, requests: 0 } } : await buildStep(deps, job, { plan, step, tree, state, config, fresh: request.fresh, audit, allowWorkflowWrites, network, costCap, showRetry });
      deps.telemetry?.stepSeconds((Date.now() - started) / 1000);
      deps.telemetry?.modelUsage("build", result.usage);
      addUsage(usage, result.usage);
      const stepUsage = { prompt: 0, completion: 0, cached: 0, requests: 0, ...earlier };
      addUsage(stepUsage, result.usage);
      if (result.ok !== true) {
        // Not done, so not ticked: what the step changed goes in a labelled WIP commit that the report points to.
        const kept = await keepUnfinishedWork(tree, step, result, { branch: target.branch, token: await port.gitToken(), identity: config.commit_author ?? deps.identity, redact: deps.redact, mayPush: (sha) => written.unfinishedRefusal(step, sha) });
        if (kept.sha && state.head) state.head.sha = kept.sha;
        if (kept.note) notes.push(kept.note);
      }
      if (result.ok === "question") {
        state.steps[step.id] = { status: "pending", usage: stepUsage };
        state.status = "awaiting_answer";
        state.question = result.question;
        state.questionMode = "build";
        state.questionStep = step.id;
        await save(`> ❓ **Waiting for an answer** before building ${step.id}: see the question below. Answer in a comment to resume.`, buildReport());
        await port.postComment(deps.redact(`❓ **Blueprint has a question while building ${step.id} (${step.title}):**\n\n${result.question}\n\nAnswer in a comment (anyone with write access) and the build resumes at ${step.id}; \`/cancel\` withdraws the question.`));
        return;
      }
      if (result.ok === "blocked") {
        state.steps[step.id] = { status: "failed", reason: `blocked: ${result.reason}`, usage: stepUsage };
        state.status = "failed";
        state.error = `${step.id} is blocked: ${result.reason}`;
        await save(blockedStatusLine(step, result.reason), buildReport());
        return;
      }
      if (!result.ok) {
        state.steps[step.id] = { status: "failed", reason: result.reason, usage: stepUsage };
        state.status = "failed";
        state.error = `${step.id} failed: ${result.reason}`;
        await save(undefined, buildReport());
        return;
      }
      const commit = reused ?? (await tree.commitAll(`${step.id}: ${step.title}\n\n${result.summary}\n\n${PLAN_TRAILER}: ${revision}`, config.commit_author ?? deps.identity));
      if (commit) {
        // What the commit changed, before it is pushed: code owners' approvals, and files outside the plan.
        const verdict = await written.check(step, commit, stepUsage);
        if (verdict.held) {
          await save(verdict.held.statusLine, buildReport());
          await port.postComment(deps.redact(verdict.held.comment));
          return;
        }
        try {
          // The token as it is now: a long build may have had it renewed since the build began.
          await tree.push(target.branch, await port.gitToken());
        } catch (error) {
          state.steps[step.id] = { status: "failed", reason: plainError(error), usage: stepUsage };
          state.status = "failed";
          state.error = `${step.id}: ${plainError(error)}`;
          await save(undefined, buildReport());
          return;
        }
        await written.pushed(step);
        if (state.head) state.head.sha = commit.sha;
        state.steps[step.id] = { status: "done", commit: commit.sha, commitUrl: port.commitUrl(commit.sha), usage: stepUsage, ...(verdict.outsidePlan ? { outsidePlan: verdict.outsidePlan } : {}) };
      } else {
        state.steps[step.id] = { status: "done", usage: stepUsage };
      }
      await save(index + 1 < todo.length ? `> ⏳ **Building ${todo[index + 1]?.id} (${index + 2} of ${todo.length})…**` : "> ⏳ **Verifying…**");
    }

    // 8. Verification: the plan's commands and the repository's test command, within the wall-time limit.
    const verification = await verify(deps, tree, plan, config, network, job.signal, Date.now() + maxWallTimeMs);
    const allDone = plan.steps.every((step) => state.steps[step.id]?.status === "done");
    state.status = allDone ? "built" : "pending";
    const failed = failedChecks(verification);
    state.error = failed.length > 0 ? `verification failed: ${describeChecks(failed)}` : null;
    // The pull request's description follows the repository's template when it has one.
    const description = target.kind === "issue-branch" ? await fillPullRequestTemplate(deps, job, { tree, plan, config, baseSha: state.base.sha, verification }) : null;
    if (description) addUsage(usage, description.usage);
    const report = buildReport(verification);

    // 9. Hand the work over: a pull request for an issue (a draft while checks fail), a report on a pull request.
    await save(await handOver(deps, port, { target, info, plan, state, verification, report, description: description?.text }), report);
    if (target.kind === "pull-request-head") await port.postComment(deps.redact(report));
  } catch (error) {
    const cancelled = error instanceof Cancelled || job.signal.aborted;
    for (const [id, progress] of Object.entries(state.steps)) if (progress.status === "building") state.steps[id] = { status: "pending", ...(progress.usage ? { usage: progress.usage } : {}) };
    if (handedOver(job.signal)) {
      // Not over: another worker resumes from what was pushed, so nothing here asks for `/build` again.
      await save("> ⏸ **Paused at a safe point:** Blueprint is restarting; another worker resumes this build from what was pushed.");
      return;
    }
    state.status = cancelled ? "cancelled" : "failed";
    state.error = cancelled ? (typeof job.signal.reason === "string" ? job.signal.reason : "cancelled") : plainError(error);
    if (!cancelled) deps.log.error({ err: error, deliveryId: job.deliveryId }, "build failed");
    await save(undefined, buildReport());
  } finally {
    await network?.close();
    await workspace?.dispose().catch((error) => deps.log.warn({ err: error }, "could not remove a workspace"));
  }
}

/**
 * The build's cost cap with the price it is counted at, or null. A cap without a price cannot be
 * enforced: the report says so (and the log), rather than ignoring it silently.
 */
function costBudget(deps: WorkflowDeps, config: RepoConfig, pricing: Pricing, notes: string[]): { dollars: number; price: ModelPrice } | null {
  const cap = costCapFor(deps, config, pricing.model);
  if (cap === undefined) return null;
  const dollars = cap.dollars;
  if (cap.note) notes.push(cap.note);
  if (cap.price && cap.price !== pricing.price) notes.push(`ℹ️ The cost cap of ${formatDollars(dollars)} is counted at the App's dearest prices: the App has no price for \`${pricing.model}\`.`);
  if (cap.price) return { dollars, price: cap.price };
  notes.push(`⚠️ The cost cap of ${formatDollars(dollars)} per build cannot be enforced: no price is configured for \`${pricing.model}\` (\`prices:\` in \`.github/blueprint.yml\`, or the App's BLUEPRINT_PRICES). Only the token and time limits hold this build.`);
  deps.log.warn({ model: pricing.model, maxCost: dollars }, "a cost cap is set but the model has no price, so it cannot be enforced");
  return null;
}

/** Why the plan is stale, or null: the base branch moved and touched files the plan names. */
async function baseMovedUnderPlan(mirror: Mirror, state: ThreadState): Promise<string | null> {
  // On a pull request the head is what counts (checked with the approval).
  if (!state.plan || !state.base.sha || state.head) return null;
  const tip = await mirror.resolve(`refs/heads/${state.base.branch}`);
  if (!tip || tip === state.base.sha) return null;
  const named = new Set(state.plan.steps.flatMap((step) => step.files));
  const touched = (await mirror.changedFiles(state.base.sha, tip)).filter((file) => named.has(file));
  if (touched.length === 0) return null;
  return `\`${state.base.branch}\` moved (\`${state.base.sha.slice(0, 7)}\` → \`${tip.slice(0, 7)}\`) and changed files the plan names: ${touched.slice(0, 10).map((file) => `\`${file}\``).join(", ")}.`;
}

type BuildTarget = { kind: "issue-branch" | "pull-request-head"; branch: string };

function buildTarget(info: ThreadInfo, config: RepoConfig, defaultBranch: string): BuildTarget | string {
  if (info.pullRequest) {
    if (!info.pullRequest.sameRepo) {
      return "This pull request comes from a fork. Blueprint never pushes to forks; to build this plan, push the branch to this repository (or open an issue and `/plan` there).";
    }
    if (info.pullRequest.headRef === defaultBranch) return "This pull request's head is the default branch; Blueprint never pushes to the default branch.";
    return { kind: "pull-request-head", branch: info.pullRequest.headRef };
  }
  const branch = `${config.branch_prefix.replace(/\/?$/, "/")}issue-${info.number}`;
  if (branch === defaultBranch) return "The configured branch prefix would make Blueprint push to the default branch; change `branch_prefix`.";
  return { kind: "issue-branch", branch };
}

/** The trailer that ties a step commit to the plan revision it built (see recoverPushedSteps). */
const PLAN_TRAILER = "Blueprint-Plan";

/**
 * A plan revision's identity: each revision is posted as its own comment, so the comment id tells
 * revisions apart, and it stays the same for every build of that revision (hand edits included).
 */
function planRevisionTrailer(planCommentId: number, revision: number): string {
  return `${planCommentId}/v${revision}`;
}

/**
 * After a crash between push and marker update: steps whose commits are already on the branch count
 * as done. Only commits this revision made count (an earlier revision's `S1: …` is another S1), and
 * never for a step a person unticked so that it is built again.
 */
function recoverPushedSteps(
  state: ThreadState,
  plan: Plan,
  commits: Array<{ sha: string; subject: string; trailers: string[] }>,
  recovery: { revision: string; unticked: string[]; commitUrl: (sha: string) => string },
): void {
  for (const commit of commits) {
    const id = /^(S\d+): /.exec(commit.subject)?.[1];
    if (!id || !commit.trailers.includes(recovery.revision) || recovery.unticked.includes(id)) continue;
    if (plan.steps.some((step) => step.id === id) && state.steps[id]?.status !== "done") {
      state.steps[id] = { status: "done", commit: commit.sha, commitUrl: recovery.commitUrl(commit.sha) };
    }
  }
}
