import type { z } from "zod";
import type { Plan } from "../plan/schema.js";
import type { CommandRunner } from "../workspace/command-runner.js";
import type { JobNetwork } from "../workspace/egress-proxy.js";

export type AgentMode = "plan" | "build";

/** Where a run ends when a terminal tool accepts its call. */
export type ToolEnding =
  | { kind: "plan_submitted"; plan: Plan }
  | { kind: "step_completed"; stepId: string; summary: string }
  /** complete_step with outcome "blocked": the agent could not do the step, and says why. */
  | { kind: "step_blocked"; stepId: string; reason: string }
  | { kind: "question"; question: string };

export interface ToolResult {
  /** Text sent back to the model. Errors start with "Error:". */
  content: string;
  ending?: ToolEnding;
}

export interface AuditEntry {
  action: "write" | "edit" | "delete" | "command";
  target: string;
  exitCode?: number | null;
  detail?: string;
}

export interface ToolContext {
  /** Absolute path of the workspace's working tree. */
  root: string;
  mode: AgentMode;
  runner: CommandRunner;
  /** Paths read so far (for progress reports). */
  filesRead: Set<string>;
  audit: AuditEntry[];
  /** The step a build-mode run is working on. */
  stepId?: string;
  /** Whether files under .github/workflows/ may be written (the installation's `workflows` permission). */
  allowWorkflowWrites: boolean;
  /** The job's network: its proxy and allow-list (none: commands have no network). */
  network?: JobNetwork;
  signal?: AbortSignal;
  /**
   * How repo_map is fitted to this run: its token budget, the thread's text (issue, comments, plan) whose identifiers
   * and paths tilt the ranking, and where parsed tags persist (outside the sandbox).
   */
  repoMap?: { tokens?: number; thread?: string; tagCacheDir?: string };
  /**
   * A directory outside the worktree that run_command's commands keep between calls (a build step's), named in
   * $BLUEPRINT_SCRATCH.
   */
  scratchDir?: string;
  /** When the run's wall-time limit ends (epoch ms): commands are capped at the time left. */
  deadline?: number;
}

export interface ToolDefinition<Schema extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  schema: Schema;
  /** The modes in which the tool is offered to the model. */
  modes: readonly AgentMode[];
  run(args: z.output<Schema>, context: ToolContext): Promise<ToolResult>;
}

export function defineTool<Schema extends z.ZodType>(tool: ToolDefinition<Schema>): ToolDefinition {
  return tool as unknown as ToolDefinition;
}

export const toolError = (message: string): ToolResult => ({ content: `Error: ${message}` });
