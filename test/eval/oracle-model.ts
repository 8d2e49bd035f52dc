import type { ModelRequest, Script, ScriptedReply } from "../helpers/model-server.js";
import type { EvalTask } from "../../eval/task-suite.js";

/**
 * A scripted model that solves whichever task it is asked about, in any order (so runs may interleave):
 * it plans exactly the real change's files, then writes each as the later version published it.
 */
export function oracleScript(tasks: EvalTask[], later: LaterFile, requests = 500): Script {
  return Array.from({ length: requests }, () => (request: ModelRequest) => oracleReply(tasks, later, request));
}

/** A file of the task's later version, as published. */
type LaterFile = (taskId: string, file: string) => string;

function oracleReply(tasks: EvalTask[], later: LaterFile, request: ModelRequest): ScriptedReply {
  const conversation = JSON.stringify(request.messages);
  const mentions = (text: string) => conversation.includes(JSON.stringify(text).slice(1, -1));
  if (request.tools?.some((tool) => tool.function.name === "submit_plan")) {
    const task = tasks.find((candidate) => mentions(candidate.issue.split("\n")[0] ?? candidate.issue));
    if (!task) return { content: "I do not know this task." };
    const step = {
      id: "S1",
      title: `Apply ${task.id}`,
      details: "Make the change the issue asks for.",
      files: task.meta.changedFiles,
      deps: [],
    };
    return {
      toolCalls: [
        {
          name: "submit_plan",
          arguments: {
            title: `Fix ${task.id}`,
            summary: "As the issue asks.",
            steps: [step],
            risks: [],
            verification: [],
          },
        },
      ],
    };
  }
  const task = tasks.find((candidate) => mentions(`Apply ${candidate.id}`));
  if (!task) return { content: "I do not know this step." };
  const written = new Set(
    request.messages
      .flatMap((message) => message.tool_calls ?? [])
      .filter((call) => call.function.name === "write_file")
      .map((call) => (JSON.parse(call.function.arguments) as { path: string }).path),
  );
  const next = task.meta.changedFiles.find((file) => !written.has(file));
  if (!next)
    return { toolCalls: [{ name: "complete_step", arguments: { step_id: "S1", summary: `Applied ${task.id}.` } }] };
  return { toolCalls: [{ name: "write_file", arguments: { path: next, content: later(task.id, next) } }] };
}
