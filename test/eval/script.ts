import type { ScriptedReply } from "../helpers/model-server.js";

/** Replies for the scripted model in the eval tests: plan requests and build requests each report fixed usage. */
export const PLAN_USAGE = { prompt: 1_000, cached: 400, completion: 100 };
export const BUILD_USAGE = { prompt: 2_000, cached: 1_500, completion: 300 };

export const call = (name: string, args: unknown): ScriptedReply => ({ toolCalls: [{ name, arguments: args }] });
export const planReply = (args: unknown): ScriptedReply => ({ ...call("submit_plan", args), usage: PLAN_USAGE });
export const buildReply = (name: string, args: unknown): ScriptedReply => ({ ...call(name, args), usage: BUILD_USAGE });
export const done = (id: string) => buildReply("complete_step", { step_id: id, summary: `did ${id}` });
export const step = (id: string, files: string[], deps: string[] = []) => ({
  id,
  title: `Step ${id}`,
  details: `Change ${files.join(", ")}.`,
  files,
  deps,
});
export const plan = (steps: unknown[]) => ({
  title: "Fix it",
  summary: "What the issue asks.",
  steps,
  risks: [],
  verification: [],
});
