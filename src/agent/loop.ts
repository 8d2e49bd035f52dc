import type OpenAI from "openai";
import { dispatchToolCall, toolsForMode } from "../tools/registry.js";
import type { ToolContext, ToolEnding } from "../tools/tool.js";
import type { Redactor } from "./redact.js";
import { repairHistory, toolCallForHistory } from "./history.js";
import { DEFAULT_CONTEXT_POLICY, leanHistory, type ContextPolicy } from "./context.js";
import { costOf, type ModelPrice } from "./cost.js";
import { ModelError, type ChatMessage, type ModelClient, type TokenUsage } from "./model.js";
import { afterGrace, describeDuration, untilAborted } from "./deadline.js";
import { truncateMiddle } from "../workspace/command-runner.js";

export interface AgentLimits {
  maxIterations: number;
  maxWallTimeMs: number;
  maxTokens: number;
}

export const DEFAULT_LIMITS: AgentLimits = { maxIterations: 50, maxWallTimeMs: 20 * 60_000, maxTokens: 2_000_000 };

export type AgentFailure = "iterations" | "wall_time" | "tokens" | "cost" | "model" | "no_tool_call" | "cancelled";

export type AgentOutcome = (ToolEnding | { kind: "failed"; failure: AgentFailure; message: string }) & {
  usage: TokenUsage;
  iterations: number;
  messages: ChatMessage[];
};

export interface AgentProgress {
  iteration: number;
  filesRead: number;
  lastTool?: string;
}

export interface AgentRun {
  model: ModelClient;
  /** System prompt and first messages (task, context). */
  messages: ChatMessage[];
  context: ToolContext;
  limits?: Partial<AgentLimits>;
  redact?: Redactor;
  signal?: AbortSignal;
  onProgress?: (progress: AgentProgress) => void;
  now?: () => number;
  /**
   * A cap in dollars on this run, priced with `price`, checked before each model request like
   * `maxTokens`; `reason` says whose cap it is (a build's budget spans several runs).
   */
  costCap?: { dollars: number; price: ModelPrice; reason: string };
  /** How the history is kept lean; `false` sends it whole (used by the benchmark's baseline). */
  contextPolicy?: ContextPolicy | false;
}

const MAX_TOOL_RESULT_CHARS = 60_000;
const MAX_NUDGES = 3;
/** How long a tool told to stop (deadline, cancel) may take to finish before the run stops waiting for it. */
const TOOL_GRACE_MS = 1000;

/** The plain tool-calling loop: the model decides what to call and when it is done; limits end it cleanly. */
export async function runAgent(run: AgentRun): Promise<AgentOutcome> {
  const limits = { ...DEFAULT_LIMITS, ...run.limits };
  const now = run.now ?? Date.now;
  const redact = run.redact ?? ((text: string) => text);
  const tools = toolsForMode(run.context.mode);
  const finishing = run.context.mode === "plan" ? "submit_plan" : "complete_step";
  let messages = [...run.messages];
  const usage: TokenUsage = { prompt: 0, completion: 0, cached: 0, requests: 0 };
  const started = now();
  // The wall-time limit as a deadline on the real clock, held by every model request and command.
  const deadline = Date.now() + limits.maxWallTimeMs;
  const context: ToolContext = { ...run.context, deadline };
  let nudges = 0;

  const end = (ending: ToolEnding | { kind: "failed"; failure: AgentFailure; message: string }, iterations: number): AgentOutcome => ({
    ...ending,
    usage,
    iterations,
    messages,
  });
  const timeLimit = (iterations: number, detail?: string) =>
    end({ kind: "failed", failure: "wall_time", message: `the run hit its time limit of ${describeDuration(limits.maxWallTimeMs)}${detail ? ` ${detail}` : ""}` }, iterations);

  for (let iteration = 1; iteration <= limits.maxIterations; iteration++) {
    if (run.signal?.aborted) return end({ kind: "failed", failure: "cancelled", message: "the run was cancelled" }, iteration - 1);
    if (now() - started > limits.maxWallTimeMs) return timeLimit(iteration - 1);
    if (usage.prompt + usage.completion > limits.maxTokens) {
      return end({ kind: "failed", failure: "tokens", message: `the run used more than its limit of ${limits.maxTokens} tokens` }, iteration - 1);
    }
    if (run.costCap && costOf(usage, run.costCap.price) >= run.costCap.dollars) {
      return end({ kind: "failed", failure: "cost", message: run.costCap.reason }, iteration - 1);
    }

    if (run.contextPolicy !== false) messages = leanHistory(messages, run.contextPolicy ?? DEFAULT_CONTEXT_POLICY);
    messages = repairHistory(messages);
    let reply;
    // A request that would outlive the run is abandoned at the deadline, retries included.
    const left = Math.max(0, limits.maxWallTimeMs - (now() - started));
    const expiry = AbortSignal.timeout(left);
    const signal = run.signal ? AbortSignal.any([run.signal, expiry]) : expiry;
    try {
      reply = await untilAborted(run.model.complete(messages, tools, { signal, deadline: Date.now() + left }), signal);
    } catch (error) {
      if (run.signal?.aborted) return end({ kind: "failed", failure: "cancelled", message: "the run was cancelled" }, iteration - 1);
      if (expiry.aborted) return timeLimit(iteration - 1, "while waiting for the model to answer");
      const message = error instanceof ModelError ? error.message : `the model request failed: ${String(error)}`;
      return end({ kind: "failed", failure: "model", message }, iteration - 1);
    }
    usage.prompt += reply.usage.prompt;
    usage.completion += reply.usage.completion;
    usage.cached += reply.usage.cached;
    usage.requests += 1;

    const calls = (reply.message.tool_calls ?? []).filter(
      (call): call is OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall => call.type === "function",
    );
    const content = nonEmpty(reply.message.content) ?? nonEmpty(reply.message.refusal);
    const keptCalls = calls.map(toolCallForHistory);
    // Strict endpoints answer 400 to an assistant message with neither content nor tool calls: an empty reply is not kept.
    if (content !== null || calls.length > 0) {
      messages.push({ role: "assistant", content, ...(calls.length > 0 ? { tool_calls: keptCalls.map((entry) => entry.call) } : {}) });
    }

    if (calls.length === 0) {
      nudges++;
      if (nudges > MAX_NUDGES) {
        return end({ kind: "failed", failure: "no_tool_call", message: `the model stopped calling tools without calling ${finishing}` }, iteration);
      }
      const nudge = `${content === null ? "Your reply was empty. " : ""}Continue by calling a tool. When you are done, call ${finishing}; if something essential is unclear, call ask_user.`;
      const last = messages.at(-1);
      if (last?.role !== "user" || last.content !== nudge) messages.push({ role: "user", content: nudge });
      continue;
    }

    let ending: ToolEnding | undefined;
    for (const [index, call] of calls.entries()) {
      if (ending) {
        messages.push({ role: "tool", tool_call_id: call.id, content: "Error: not run, because an earlier call in this turn ended the run." });
        continue;
      }
      // A tool call is held to the run's deadline and abort signal too. Tools see both (a command is
      // killed at the deadline and still reported); one that hangs anyway (a file read that never
      // returns, say) is abandoned shortly after, so the run ends with a report.
      const toolExpiry = AbortSignal.timeout(Math.max(0, limits.maxWallTimeMs - (now() - started)));
      const stopped = run.signal ? AbortSignal.any([run.signal, toolExpiry]) : toolExpiry;
      let result;
      try {
        result = await untilAborted(dispatchToolCall(call.function.name, call.function.arguments ?? "", context), afterGrace(stopped, TOOL_GRACE_MS));
      } catch (error) {
        if (run.signal?.aborted) return end({ kind: "failed", failure: "cancelled", message: "the run was cancelled" }, iteration);
        if (toolExpiry.aborted) return timeLimit(iteration, `while ${call.function.name} was running`);
        throw error;
      }
      const elidedChars = keptCalls[index]?.elidedChars ?? 0;
      const note = elidedChars > 0 ? `\n\n[The arguments of this call were too large to keep in the conversation; ${elidedChars} characters of them were elided.]` : "";
      messages.push({ role: "tool", tool_call_id: call.id, content: truncateMiddle(redact(result.content) + note, MAX_TOOL_RESULT_CHARS) });
      ending = result.ending;
      run.onProgress?.({ iteration, filesRead: context.filesRead.size, lastTool: call.function.name });
    }
    if (ending) return end(ending, iteration);
  }
  return end({ kind: "failed", failure: "iterations", message: `the run hit its limit of ${limits.maxIterations} model turns` }, limits.maxIterations);
}

const nonEmpty = (text: string | null | undefined): string | null => (typeof text === "string" && text !== "" ? text : null);
