import { readFileSync } from "node:fs";
import path from "node:path";
import { loadTask } from "../../eval/task-suite.js";
import type { ScriptedReply } from "../helpers/model-server.js";

/** Replies for the scripted model in the eval tests: plan requests and build requests each report fixed usage. */
export const TASKS = path.resolve("eval/suites/smoke");
export const PLAN_USAGE = { prompt: 1_000, cached: 400, completion: 100 };
export const BUILD_USAGE = { prompt: 2_000, cached: 1_500, completion: 300 };

export const call = (name: string, args: unknown): ScriptedReply => ({ toolCalls: [{ name, arguments: args }] });
export const planReply = (args: unknown): ScriptedReply => ({ ...call("submit_plan", args), usage: PLAN_USAGE });
export const buildReply = (name: string, args: unknown): ScriptedReply => ({ ...call(name, args), usage: BUILD_USAGE });
export const done = (id: string) => buildReply("complete_step", { step_id: id, summary: `did ${id}` });
export const step = (id: string, files: string[], deps: string[] = []) => ({ id, title: `Step ${id}`, details: `Change ${files.join(", ")}.`, files, deps });
export const plan = (steps: unknown[]) => ({ title: "Fix it", summary: "What the issue asks.", steps, risks: [], verification: [] });

/** The one line the real change replaced, and its replacement: what a model that solves the task would edit. */
export function realEdit(taskId: string, file: string): { old_string: string; new_string: string } {
  const task = loadTask(path.join(TASKS, taskId));
  const before = readFileSync(path.join(task.repoDir, file), "utf8").split("\n");
  const after = readFileSync(path.join(task.solutionDir, file), "utf8").split("\n");
  const old_string = before.find((line) => !after.includes(line));
  const new_string = after.find((line) => !before.includes(line));
  if (old_string === undefined || new_string === undefined) throw new Error(`${taskId}: no one-line change in ${file}`);
  return { old_string, new_string };
}
