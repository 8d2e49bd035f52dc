import { z } from "zod";
import type OpenAI from "openai";
import { describeZodIssues } from "../plan/validate.js";
import { PathError } from "./paths.js";
import { readFileTool } from "./read-file.js";
import { listFilesTool } from "./list-files.js";
import { searchTool } from "./search.js";
import { repoMapTool } from "./repo-map.js";
import { writeFileTool, deleteFileTool } from "./write-file.js";
import { editFileTool } from "./edit-file.js";
import { runCommandTool } from "./run-command.js";
import { submitPlanTool, askUserTool, completeStepTool } from "./terminal.js";
import { toolError, type AgentMode, type ToolContext, type ToolDefinition, type ToolResult } from "./tool.js";

export const ALL_TOOLS: readonly ToolDefinition[] = [
  readFileTool,
  listFilesTool,
  searchTool,
  repoMapTool,
  writeFileTool,
  editFileTool,
  deleteFileTool,
  runCommandTool,
  askUserTool,
  submitPlanTool,
  completeStepTool,
];

const WRITE_TOOLS = new Set(["write_file", "edit_file", "delete_file", "run_command"]);

/** A tool as offered to the model: always a function tool (toChatTool), so callers may read `.function`. */
export type ChatTool = OpenAI.Chat.Completions.ChatCompletionFunctionTool;

/** What the model is offered in a mode. Built once per mode so the list stays byte-identical across requests. */
export function toolsForMode(mode: AgentMode): ChatTool[] {
  const cached = offered.get(mode);
  if (cached) return cached;
  const tools = ALL_TOOLS.filter((tool) => tool.modes.includes(mode)).map(toChatTool);
  offered.set(mode, tools);
  return tools;
}
const offered = new Map<AgentMode, ChatTool[]>();

function toChatTool(tool: ToolDefinition): ChatTool {
  const parameters = z.toJSONSchema(tool.schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  delete parameters.$schema;
  return { type: "function", function: { name: tool.name, description: tool.description, parameters } };
}

/**
 * Runs one tool call from the model. Never throws: a refusal, bad arguments or a failing tool
 * become a result starting with "Error:" that the model can act on.
 */
export async function dispatchToolCall(name: string, rawArguments: string, context: ToolContext): Promise<ToolResult> {
  const tool = ALL_TOOLS.find((candidate) => candidate.name === name);
  if (context.mode === "plan" && WRITE_TOOLS.has(name)) {
    return toolError(
      `${name} is not available in plan mode. Plan mode is read-only: explore with read_file, list_files, search and repo_map, then call submit_plan. Changes are made only after a maintainer approves the plan with /build.`,
    );
  }
  if (!tool || !tool.modes.includes(context.mode)) {
    const available = ALL_TOOLS.filter((candidate) => candidate.modes.includes(context.mode)).map(
      (candidate) => candidate.name,
    );
    return toolError(
      `there is no tool named "${name}" in ${context.mode} mode. Available tools: ${available.join(", ")}.`,
    );
  }
  let args: unknown;
  try {
    args = rawArguments.trim() === "" ? {} : JSON.parse(rawArguments);
  } catch {
    return toolError(
      `the arguments for ${name} are not valid JSON. Send a JSON object matching the tool's parameters.`,
    );
  }
  const parsed = tool.schema.safeParse(args);
  if (!parsed.success) {
    return toolError(`invalid arguments for ${name}:\n- ${describeZodIssues(parsed.error).join("\n- ")}`);
  }
  try {
    return await tool.run(parsed.data, context);
  } catch (error) {
    if (error instanceof PathError) return toolError(error.message);
    const message = error instanceof Error ? error.message : String(error);
    return toolError(`${name} failed: ${message}`);
  }
}
