import OpenAI from "openai";
import { Stream } from "openai/streaming";
import type { ChatTool } from "../tools/registry.js";
import { capAtDeadline } from "../shared/deadline.js";
import { MAX_ANSWER_BYTES, seconds, watchAttempts, type ModelRetry, type WatchedFetch } from "./model-fetch.js";
import { assembleStream } from "./model-stream.js";
import { describeNotFound, describeUnknownModel, saysModelUnknown } from "./endpoint-not-found.js";

export type { ModelRetry } from "./model-fetch.js";

export type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
export type AssistantMessage = OpenAI.Chat.Completions.ChatCompletionMessage;

// Kept for src/jobs/metrics.ts until the job runtime's restructure (#29) imports it from shared/.
export type { TokenUsage } from "../shared/model-usage.js";

export interface ModelReply {
  message: AssistantMessage;
  usage: { prompt: number; completion: number; cached: number };
}

export interface ModelRequestOptions {
  signal?: AbortSignal;
  /** When the run's time ends (epoch ms): the request's timeout is capped at it (the signal ends it there). */
  deadline?: number;
}

export interface ModelClient {
  readonly model: string;
  complete(messages: ChatMessage[], tools: ChatTool[], options?: ModelRequestOptions): Promise<ModelReply>;
}

/** A failure of the model endpoint, worded for the people reading the issue. */
export class ModelError extends Error {}

export interface ModelClientOptions {
  baseURL?: string | undefined;
  apiKey?: string | undefined;
  model: string;
  /** How soon the endpoint must start answering each attempt. */
  timeoutMs?: number;
  /** The longest silence within an answer once it has started; by default the same as `timeoutMs`. */
  idleTimeoutMs?: number;
  maxRetries?: number;
  /** The most an answer may weigh (bytes, streamed or whole); default MAX_ANSWER_BYTES. */
  maxAnswerBytes?: number;
  fetch?: typeof fetch;
  /** Told when the SDK starts another attempt at a request, so people see retries instead of silence. */
  onRetry?: ((retry: ModelRetry) => void) | undefined;
}

/**
 * The default time limit of one model attempt: how soon the endpoint must start answering, and the
 * longest silence within a streamed answer; a long answer that keeps coming is never cut off.
 */
export const DEFAULT_MODEL_TIMEOUT_MS = 60_000;

/** The longest a timer may be set for; without a deadline, the SDK's own time limit is effectively off. */
const NO_LIMIT_MS = 2_147_483_647;

/**
 * Chat completions over any OpenAI-compatible endpoint, streamed so that time limits watch the
 * endpoint's silence rather than the answer's length; the SDK retries 429/5xx, silences and broken
 * answers with backoff. An endpoint that cannot stream is asked without streaming from then on.
 */
export function createModelClient(options: ModelClientOptions): ModelClient {
  const timeoutMs = options.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS;
  const attempts = (options.maxRetries ?? 3) + 1;
  const watched = watchAttempts(options.fetch ?? fetch, {
    firstChunkMs: timeoutMs,
    idleMs: options.idleTimeoutMs ?? timeoutMs,
    maxBytes: options.maxAnswerBytes ?? MAX_ANSWER_BYTES,
    attempts,
    onRetry: options.onRetry,
  });
  const client = new OpenAI({
    apiKey: options.apiKey || "not-set",
    baseURL: options.baseURL || undefined,
    maxRetries: options.maxRetries ?? 3,
    fetch: watched.fetch,
  });
  const where = options.baseURL || "https://api.openai.com/v1";
  let streams = true;
  return {
    model: options.model,
    async complete(messages, tools, request = {}) {
      // A conversation without tools (e.g. writing a pull request's description) sends none: endpoints refuse
      // `tool_choice` alone.
      const body = {
        model: options.model,
        messages,
        ...(tools.length > 0 ? { tools, tool_choice: "auto" as const } : {}),
      };
      const requestOptions = {
        ...(request.signal ? { signal: request.signal } : {}),
        timeout: requestTimeout(request.deadline),
      };
      try {
        if (streams) {
          try {
            const response = await client.chat.completions
              .create({ ...body, stream: true, stream_options: { include_usage: true } }, requestOptions)
              .asResponse();
            if (response.headers.get("content-type")?.includes("text/event-stream")) {
              const answer = await assembleStream(
                Stream.fromSSEResponse<OpenAI.Chat.Completions.ChatCompletionChunk>(response, new AbortController()),
              );
              if (!answer) throw new ModelError(`the model endpoint at ${where} streamed an answer without a message`);
              return toReply(answer.message, answer.usage);
            }
            // It answered whole although asked to stream: it does not stream, so it is not asked to again.
            streams = false;
            return fromCompletion((await response.json()) as OpenAI.Chat.Completions.ChatCompletion, where);
          } catch (error) {
            if (!refusesStreaming(error)) throw error;
            streams = false;
          }
        }
        return fromCompletion(await client.chat.completions.create(body, requestOptions), where);
      } catch (error) {
        throw toModelError(error, { where, model: options.model, attempts }, watched);
      }
    },
  };
}

/** Most tokens one answer is counted at: sums stay finite integers. */
const MAX_COUNTED_TOKENS = 1e12;

/**
 * A count the endpoint reported, as a whole number of tokens: a fraction, a negative, a string or a
 * huge number (summed to Infinity, which JSON writes as null) would end up in the hidden state, and
 * a state that no longer validates loses the thread's plan.
 */
function tokenCount(reported: unknown): number {
  return typeof reported === "number" && Number.isFinite(reported) && reported > 0
    ? Math.min(Math.floor(reported), MAX_COUNTED_TOKENS)
    : 0;
}

function fromCompletion(completion: OpenAI.Chat.Completions.ChatCompletion, where: string): ModelReply {
  const message = completion.choices?.[0]?.message;
  if (!message) throw new ModelError(`the model endpoint at ${where} returned a response without a message`);
  return toReply(message, completion.usage ?? null);
}

function toReply(message: AssistantMessage, usage: OpenAI.CompletionUsage | null): ModelReply {
  return {
    message,
    usage: {
      prompt: tokenCount(usage?.prompt_tokens),
      completion: tokenCount(usage?.completion_tokens),
      cached: tokenCount(usage?.prompt_tokens_details?.cached_tokens),
    },
  };
}

/** A 400 (or 422) that names streaming: the endpoint does not take `stream` (or `stream_options`). */
function refusesStreaming(error: unknown): boolean {
  return (
    error instanceof OpenAI.APIError && (error.status === 400 || error.status === 422) && /stream/i.test(error.message)
  );
}

/** One line for people: which attempt runs now, why, after what wait, and the time limit. */
export function describeRetry(retry: ModelRetry): string {
  return `The model endpoint ${retry.reason} on attempt ${retry.attempt - 1} of ${retry.attempts}; attempt ${retry.attempt} of ${retry.attempts} started after a ${seconds(retry.waitedMs)} wait (each attempt must start answering within ${seconds(retry.timeoutMs)}).`;
}

/**
 * The SDK's time limit for a whole request, retries' attempts each: only the deadline, a moment past
 * it (the caller's signal ends the request at the deadline itself, so what the caller sees is the
 * run's time limit, not a timeout). The first-chunk and idle limits are kept by the watched fetch.
 */
function requestTimeout(deadline: number | undefined): number {
  return Math.max(1, Math.floor(capAtDeadline(NO_LIMIT_MS, deadline === undefined ? undefined : deadline + 1000)));
}

/** Where each front end takes the model settings, for messages that tell people what to check. */
const KEY_SETTING = "the model API key (`OPENAI_API_KEY`; the Action's `openai-api-key` input; the CLI's `--api-key`)";

/** The statuses the SDK retries (with backoff); others fail at the first attempt. */
const retried = (status: number | undefined) =>
  status === 408 || status === 409 || status === 429 || (status !== undefined && status >= 500);

function toModelError(
  error: unknown,
  request: { where: string; model: string; attempts: number },
  watched: Pick<WatchedFetch, "lastFailure" | "lastRefusal">,
): Error {
  const { where, attempts } = request;
  const lastFailure = watched.lastFailure();
  if (error instanceof OpenAI.APIUserAbortError || error instanceof ModelError) return error;
  const last = attempts > 1 ? ` on the last of ${attempts} attempts` : "";
  if (error instanceof OpenAI.APIConnectionTimeoutError) {
    return new ModelError(
      `the model endpoint at ${where} did not answer in time${lastFailure ? `: it ${lastFailure}${last}` : ""}`,
    );
  }
  if (error instanceof OpenAI.APIConnectionError)
    return new ModelError(`the model endpoint at ${where} ${lastFailure ?? "could not be reached"}${last}`);
  // An error event inside a streamed answer has no HTTP status.
  if (error instanceof OpenAI.APIError && error.status === undefined)
    return new ModelError(`the model endpoint at ${where} reported an error in its answer: ${error.message}`);
  if (error instanceof OpenAI.APIError) {
    const status = error.status ?? "an error";
    if (error.status === 401 || error.status === 403) {
      return new ModelError(
        `the model endpoint at ${where} refused the API key (HTTP ${status}); check ${KEY_SETTING}`,
      );
    }
    const refusal = watched.lastRefusal();
    if (error.status === 404) return new ModelError(describeNotFound(where, request.model, refusal));
    // Some servers (LiteLLM, OpenRouter) refuse an unknown model with a 400.
    if (error.status === 400 && refusal && saysModelUnknown(refusal.body))
      return new ModelError(describeUnknownModel(where, request.model, refusal));
    return new ModelError(
      `the model endpoint at ${where} answered HTTP ${status}${attempts > 1 && retried(error.status) ? ` after ${attempts} attempts` : ""}`,
    );
  }
  return new ModelError(`the model request failed: ${error instanceof Error ? error.message : String(error)}`);
}
