import { mkdtemp, rm } from "node:fs/promises";
import { runAgent } from "../../agent/loop.js";
import { MIN_COMMAND_MS, timeLeft } from "../../shared/deadline.js";
import type { ModelPrice, TokenUsage } from "../../shared/model-usage.js";
import { BUILD_SYSTEM_PROMPT, stepTaskMessage, type DoneStep, type RepoInstructions } from "../../agent/prompts.js";
import type { RepoConfig } from "../../config/repo-config.js";
import type { Plan, PlanStep } from "../../plan/schema.js";
import { whyNotACommand } from "../../plan/verification.js";
import type { AuditEntry } from "../../tools/tool.js";
import type { Workspace } from "../../workspace/workspace.js";
import type { JobNetwork } from "../../workspace/egress-proxy.js";
import type { VerificationResult } from "./report.js";
import type { JobContext, WorkflowDeps } from "../deps.js";
import { limitsFor } from "../limits.js";
import { showingRetries } from "../surfaces/index.js";
import type { ThreadState } from "../state.js";

/** One step of a build: a build-mode agent run ending with complete_step; and the checks after the last step. */

export const VERIFY_TIMEOUT_MS = 10 * 60_000;

/** The job was cancelled (or the app is shutting down) while a step ran. */
export class Cancelled extends Error {}

export interface StepInput {
  plan: Plan;
  step: PlanStep;
  tree: Workspace;
  state: ThreadState;
  config: RepoConfig;
  fresh: boolean;
  audit: AuditEntry[];
  allowWorkflowWrites: boolean;
  /** The build's network (workflow/build/network.ts), the same for every command it runs. */
  network: JobNetwork;
  /** The build's setup in words (workflow/build/setup.ts), after the step's task in its first message. */
  dependencies?: string | undefined;
  /** What is left of the build's cost cap, when it has one and the model is priced. */
  costCap?: { dollars: number; price: ModelPrice; reason: string } | undefined;
  /** The plan's steps already done, with their commits and summaries. */
  done: DoneStep[];
  /** The repository's AGENTS.md for the step's files. */
  agentInstructions?: RepoInstructions;
  /** Shows a retried model request's line in the status comment; null clears it. */
  showRetry: (retryLine: string | null) => void;
}

export type StepResult =
  | { ok: true; summary: string; usage: TokenUsage }
  | { ok: "question"; question: string; usage: TokenUsage }
  /** The agent reported it could not do the step (complete_step with outcome "blocked"). */
  | { ok: "blocked"; reason: string; usage: TokenUsage }
  | { ok: false; reason: string; usage: TokenUsage };

export async function buildStep(deps: WorkflowDeps, job: JobContext, input: StepInput): Promise<StepResult> {
  // A directory beside the worktree (never committed) that the step's commands keep between calls; gone when the step
  // ends.
  const scratchDir = await mkdtemp(`${input.tree.dir}.scratch-`);
  try {
    return await runStep(deps, job, input, scratchDir);
  } finally {
    await rm(scratchDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

async function runStep(deps: WorkflowDeps, job: JobContext, input: StepInput, scratchDir: string): Promise<StepResult> {
  const notes =
    input.fresh || input.state.explored.length === 0
      ? undefined
      : `Files read while planning: ${input.state.explored.join(", ")}`;
  const outcome = await runAgent({
    model: showingRetries((onRetry) => deps.modelFor(input.config, onRetry), input.showRetry),
    messages: [
      { role: "system", content: BUILD_SYSTEM_PROMPT },
      {
        role: "user",
        content: [
          stepTaskMessage(input.plan, input.step, {
            planningNotes: notes,
            answers: input.state.answers,
            approverNotes: input.state.buildNotes,
            done: input.done,
            agentInstructions: input.agentInstructions,
          }),
          input.dependencies,
        ]
          .filter(Boolean)
          .join("\n\n"),
      },
    ],
    context: {
      root: input.tree.dir,
      mode: "build",
      runner: deps.runner,
      filesRead: new Set(),
      audit: input.audit,
      stepId: input.step.id,
      allowWorkflowWrites: input.allowWorkflowWrites,
      network: input.network,
      signal: job.signal,
      scratchDir,
    },
    limits: limitsFor(deps.limits, input.config),
    redact: deps.redact,
    signal: job.signal,
    ...(input.costCap ? { costCap: input.costCap } : {}),
  });
  switch (outcome.kind) {
    case "step_completed":
      return { ok: true, summary: outcome.summary, usage: outcome.usage };
    case "question":
      return { ok: "question", question: outcome.question, usage: outcome.usage };
    case "step_blocked":
      return { ok: "blocked", reason: outcome.reason, usage: outcome.usage };
    case "failed":
      if (outcome.failure === "cancelled") throw new Cancelled();
      return { ok: false, reason: outcome.message, usage: outcome.usage };
    default:
      return { ok: false, reason: "the step ended without complete_step", usage: outcome.usage };
  }
}

/**
 * The plan's verification commands and the repository's test command. Together they get the same
 * wall-time limit as an agent run: each command's timeout is capped at the time left before `deadline`.
 */
export async function verify(
  deps: WorkflowDeps,
  tree: Workspace,
  plan: Plan,
  config: RepoConfig,
  network: JobNetwork,
  signal: AbortSignal,
  deadline: number,
): Promise<VerificationResult[]> {
  const commands = [...new Set([...plan.verification, ...(config.test ? [config.test] : [])])];
  const results: VerificationResult[] = [];
  for (const command of commands) {
    // An entry that reads as a note for people (a plan saved before verification held only commands) is shown, not run.
    const prose = command === config.test ? null : whyNotACommand(command);
    if (prose) {
      results.push({ command, exitCode: null, timedOut: false, output: "", notRun: `not a command: ${prose}` });
      continue;
    }
    // /cancel and shutdown stop a long test run too (the whole process group is killed).
    if (signal.aborted) throw new Cancelled();
    const left = timeLeft(deadline);
    if (left < MIN_COMMAND_MS) {
      results.push({
        command,
        exitCode: null,
        timedOut: true,
        output: "Not run: verification had used up its time limit.",
      });
      continue;
    }
    const run = await deps.runner.run(command, {
      cwd: tree.dir,
      timeoutMs: Math.min(VERIFY_TIMEOUT_MS, left),
      network,
      signal,
    });
    if (signal.aborted) throw new Cancelled();
    results.push({ command, exitCode: run.exitCode, timedOut: run.timedOut, output: deps.redact(run.output) });
  }
  return results;
}
