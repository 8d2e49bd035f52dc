import type OpenAI from "openai";
import { dispatchToolCall, toolsForMode } from "../tools/registry.js";
import type { ToolContext, ToolEnding } from "../tools/tool.js";
import type { Redactor } from "./redact.js";
import { repairHistory, toolCallForHistory } from "./history.js";
import { DEFAULT_CONTEXT_POLICY, leanHistory, type ContextPolicy } from "./context.js";
import { costOf } from "./cost.js";
import type { ModelPrice, TokenUsage } from "../shared/model-usage.js";
import { ModelError, type ChatMessage, type ModelClient } from "./model.js";
import { afterGrace, describeDuration, timeoutSignal, untilAborted } from "../shared/deadline.js";
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

type RunEnding = ToolEnding | { kind: "failed"; failure: AgentFailure; message: string };
type FunctionCall = OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;

/** One run's limits, clock and conversation so far, shared by its steps. */
interface Loop {
  run: AgentRun;
  limits: AgentLimits;
  now: () => number;
  redact: Redactor;
  tools: ReturnType<typeof toolsForMode>;
  finishing: string;
  messages: ChatMessage[];
  usage: TokenUsage;
  started: number;
  context: ToolContext;
  nudges: number;
}

/** The plain tool-calling loop: the model decides what to call and when it is done; limits end it cleanly. */
export async function runAgent(run: AgentRun): Promise<AgentOutcome> {
  const loop = startLoop(run);
  for (let iteration = 1; iteration <= loop.limits.maxIterations; iteration++) {
    // 1. A limit reached ends the run before the next request.
    const limited = limitReached(loop, iteration - 1);
    if (limited) return limited;
    // 2. The model's turn.
    const reply = await askModel(loop, iteration - 1);
    if ("outcome" in reply) return reply.outcome;
    // 3. No tool called: the model is nudged to go on (a few times).
    if (reply.calls.length === 0) {
      const gaveUp = nudge(loop, reply.content, iteration);
      if (gaveUp) return gaveUp;
      continue;
    }
    // 4. The tools it called, in order; one may end the run.
    const ending = await runToolCalls(loop, reply.calls, reply.elided, iteration);
    if (ending) return ending;
  }
  return end(
    loop,
    {
      kind: "failed",
      failure: "iterations",
      message: `the run hit its limit of ${loop.limits.maxIterations} model turns`,
    },
    loop.limits.maxIterations,
  );
}

function startLoop(run: AgentRun): Loop {
  const limits = { ...DEFAULT_LIMITS, ...run.limits };
  const now = run.now ?? Date.now;
  return {
    run,
    limits,
    now,
    redact: run.redact ?? ((text: string) => text),
    tools: toolsForMode(run.context.mode),
    finishing: run.context.mode === "plan" ? "submit_plan" : "complete_step",
    messages: [...run.messages],
    usage: { prompt: 0, completion: 0, cached: 0, requests: 0 },
    started: now(),
    // The wall-time limit as a deadline on the real clock, held by every model request and command.
    context: { ...run.context, deadline: Date.now() + limits.maxWallTimeMs },
    nudges: 0,
  };
}

function end(loop: Loop, ending: RunEnding, iterations: number): AgentOutcome {
  return { ...ending, usage: loop.usage, iterations, messages: loop.messages };
}

function timeLimit(loop: Loop, iterations: number, detail?: string): AgentOutcome {
  return end(
    loop,
    {
      kind: "failed",
      failure: "wall_time",
      message: `the run hit its time limit of ${describeDuration(loop.limits.maxWallTimeMs)}${detail ? ` ${detail}` : ""}`,
    },
    iterations,
  );
}

function cancelled(loop: Loop, iterations: number): AgentOutcome {
  return end(loop, { kind: "failed", failure: "cancelled", message: "the run was cancelled" }, iterations);
}

function limitReached(loop: Loop, iterations: number): AgentOutcome | null {
  const { run, limits, usage } = loop;
  if (run.signal?.aborted) return cancelled(loop, iterations);
  if (loop.now() - loop.started > limits.maxWallTimeMs) return timeLimit(loop, iterations);
  if (usage.prompt + usage.completion > limits.maxTokens) {
    return end(
      loop,
      { kind: "failed", failure: "tokens", message: `the run used more than its limit of ${limits.maxTokens} tokens` },
      iterations,
    );
  }
  if (run.costCap && costOf(usage, run.costCap.price) >= run.costCap.dollars) {
    return end(loop, { kind: "failed", failure: "cost", message: run.costCap.reason }, iterations);
  }
  return null;
}

type ModelTurn = { calls: FunctionCall[]; elided: number[]; content: string | null } | { outcome: AgentOutcome };

/** One model request on the lean, repaired history; its reply is counted and kept. */
async function askModel(loop: Loop, iterations: number): Promise<ModelTurn> {
  const { run, limits } = loop;
  if (run.contextPolicy !== false)
    loop.messages = leanHistory(loop.messages, run.contextPolicy ?? DEFAULT_CONTEXT_POLICY);
  loop.messages = repairHistory(loop.messages);
  let reply;
  // A request that would outlive the run is abandoned at the deadline, retries included.
  const left = Math.max(0, limits.maxWallTimeMs - (loop.now() - loop.started));
  const expiry = timeoutSignal(left);
  const signal = run.signal ? AbortSignal.any([run.signal, expiry.signal]) : expiry.signal;
  try {
    reply = await untilAborted(
      run.model.complete(loop.messages, loop.tools, { signal, deadline: Date.now() + left }),
      signal,
    );
  } catch (error) {
    if (run.signal?.aborted) return { outcome: cancelled(loop, iterations) };
    if (expiry.signal.aborted) return { outcome: timeLimit(loop, iterations, "while waiting for the model to answer") };
    const message = error instanceof ModelError ? error.message : `the model request failed: ${String(error)}`;
    return { outcome: end(loop, { kind: "failed", failure: "model", message }, iterations) };
  } finally {
    expiry.clear();
  }
  loop.usage.prompt += reply.usage.prompt;
  loop.usage.completion += reply.usage.completion;
  loop.usage.cached += reply.usage.cached;
  loop.usage.requests += 1;

  const calls = (reply.message.tool_calls ?? []).filter((call): call is FunctionCall => call.type === "function");
  const content = nonEmpty(reply.message.content) ?? nonEmpty(reply.message.refusal);
  const keptCalls = calls.map(toolCallForHistory);
  // Strict endpoints answer 400 to an assistant message with neither content nor tool calls: an empty reply is not
  // kept.
  if (content !== null || calls.length > 0) {
    loop.messages.push({
      role: "assistant",
      content,
      ...(calls.length > 0 ? { tool_calls: keptCalls.map((entry) => entry.call) } : {}),
    });
  }
  return { calls, elided: keptCalls.map((entry) => entry.elidedChars), content };
}

function nudge(loop: Loop, content: string | null, iteration: number): AgentOutcome | null {
  loop.nudges++;
  if (loop.nudges > MAX_NUDGES) {
    return end(
      loop,
      {
        kind: "failed",
        failure: "no_tool_call",
        message: `the model stopped calling tools without calling ${loop.finishing}`,
      },
      iteration,
    );
  }
  const text = `${content === null ? "Your reply was empty. " : ""}Continue by calling a tool. When you are done, call ${loop.finishing}; if something essential is unclear, call ask_user.`;
  const last = loop.messages.at(-1);
  if (last?.role !== "user" || last.content !== text) loop.messages.push({ role: "user", content: text });
  return null;
}

async function runToolCalls(
  loop: Loop,
  calls: FunctionCall[],
  elided: number[],
  iteration: number,
): Promise<AgentOutcome | null> {
  const { run, limits } = loop;
  let ending: ToolEnding | undefined;
  for (const [index, call] of calls.entries()) {
    if (ending) {
      loop.messages.push({
        role: "tool",
        tool_call_id: call.id,
        content: "Error: not run, because an earlier call in this turn ended the run.",
      });
      continue;
    }
    // A tool call is held to the run's deadline and abort signal too. Tools see both (a command is
    // killed at the deadline and still reported); one that hangs anyway (a file read that never
    // returns, say) is abandoned shortly after, so the run ends with a report.
    const toolExpiry = timeoutSignal(Math.max(0, limits.maxWallTimeMs - (loop.now() - loop.started)));
    const stopped = run.signal ? AbortSignal.any([run.signal, toolExpiry.signal]) : toolExpiry.signal;
    let result;
    try {
      result = await untilAborted(
        dispatchToolCall(call.function.name, call.function.arguments ?? "", loop.context),
        afterGrace(stopped, TOOL_GRACE_MS),
      );
    } catch (error) {
      if (run.signal?.aborted) return cancelled(loop, iteration);
      if (toolExpiry.signal.aborted) return timeLimit(loop, iteration, `while ${call.function.name} was running`);
      throw error;
    } finally {
      toolExpiry.clear();
    }
    const elidedChars = elided[index] ?? 0;
    const note =
      elidedChars > 0
        ? `\n\n[The arguments of this call were too large to keep in the conversation; ${elidedChars} characters of them were elided.]`
        : "";
    loop.messages.push({
      role: "tool",
      tool_call_id: call.id,
      content: truncateMiddle(loop.redact(result.content) + note, MAX_TOOL_RESULT_CHARS),
    });
    ending = result.ending;
    run.onProgress?.({ iteration, filesRead: loop.context.filesRead.size, lastTool: call.function.name });
  }
  return ending ? end(loop, ending, iteration) : null;
}

const nonEmpty = (text: string | null | undefined): string | null =>
  typeof text === "string" && text !== "" ? text : null;
