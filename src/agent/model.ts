import OpenAI from "openai";
import type { ChatTool } from "../tools/registry.js";
import { capAtDeadline } from "./deadline.js";

export type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
export type AssistantMessage = OpenAI.Chat.Completions.ChatCompletionMessage;

export interface TokenUsage {
  prompt: number;
  completion: number;
  cached: number;
  requests: number;
}

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
  timeoutMs?: number;
  maxRetries?: number;
  fetch?: typeof fetch;
  /** Told when the SDK starts another attempt at a request, so people see retries instead of silence. */
  onRetry?: ((retry: ModelRetry) => void) | undefined;
}

/** Another attempt at a model request, after the previous one failed. */
export interface ModelRetry {
  /** The attempt that is starting now: 2 for the first retry. */
  attempt: number;
  /** Attempts in all (1 + retries). */
  attempts: number;
  /** Why the previous attempt failed, e.g. "answered HTTP 503", "did not answer within 120 s". */
  reason: string;
  /** The back-off before this attempt. */
  waitedMs: number;
  /** How long each attempt may take. */
  timeoutMs: number;
}

/** The default time limit of one model request: a whole (non-streamed) answer, not a whole run. */
export const DEFAULT_MODEL_TIMEOUT_MS = 120_000;

/** Chat completions over any OpenAI-compatible endpoint; the SDK retries 429/5xx with backoff. */
export function createModelClient(options: ModelClientOptions): ModelClient {
  const timeoutMs = options.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS;
  const fetchFn = options.onRetry ? observeRetries(options.fetch ?? fetch, { timeoutMs, attempts: (options.maxRetries ?? 3) + 1, onRetry: options.onRetry }) : options.fetch;
  const client = new OpenAI({
    apiKey: options.apiKey || "not-set",
    baseURL: options.baseURL || undefined,
    timeout: timeoutMs,
    maxRetries: options.maxRetries ?? 3,
    ...(fetchFn ? { fetch: fetchFn } : {}),
  });
  const where = options.baseURL || "https://api.openai.com/v1";
  return {
    model: options.model,
    async complete(messages, tools, request = {}) {
      let completion: OpenAI.Chat.Completions.ChatCompletion;
      try {
        completion = await client.chat.completions.create(
          // A conversation without tools (e.g. writing a pull request's description) sends none: endpoints refuse `tool_choice` alone.
          { model: options.model, messages, ...(tools.length > 0 ? { tools, tool_choice: "auto" as const } : {}) },
          { ...(request.signal ? { signal: request.signal } : {}), timeout: requestTimeout(timeoutMs, request.deadline) },
        );
      } catch (error) {
        throw toModelError(error, where, (options.maxRetries ?? 3) + 1);
      }
      const message = completion.choices?.[0]?.message;
      if (!message) throw new ModelError(`the model endpoint at ${where} returned a response without a message`);
      const usage = completion.usage;
      return {
        message,
        usage: {
          prompt: usage?.prompt_tokens ?? 0,
          completion: usage?.completion_tokens ?? 0,
          cached: usage?.prompt_tokens_details?.cached_tokens ?? 0,
        },
      };
    },
  };
}

/**
 * The SDK retries inside one call and says nothing; each attempt is one fetch that carries its retry
 * count, so a fetch wrapper sees when a retry starts, why the attempt before it failed and how long it waited.
 */
function observeRetries(base: typeof fetch, retries: { timeoutMs: number; attempts: number; onRetry: (retry: ModelRetry) => void }): typeof fetch {
  let failed: { reason: string; at: number } | null = null;
  return async (input, init) => {
    const retryCount = Number(new Headers(init?.headers).get("x-stainless-retry-count") ?? "0");
    if (retryCount > 0 && failed) {
      retries.onRetry({ attempt: retryCount + 1, attempts: retries.attempts, reason: failed.reason, waitedMs: Date.now() - failed.at, timeoutMs: retries.timeoutMs });
    }
    failed = null;
    try {
      const response = await base(input, init);
      if (!response.ok) failed = { reason: `answered HTTP ${response.status}`, at: Date.now() };
      return response;
    } catch (error) {
      const reason = init?.signal?.aborted ? `did not answer within ${seconds(retries.timeoutMs)}` : "could not be reached";
      failed = { reason, at: Date.now() };
      throw error;
    }
  };
}

/** One line for people: which attempt runs now, why, after what wait, and how long it may take. */
export function describeRetry(retry: ModelRetry): string {
  return `The model endpoint ${retry.reason} on attempt ${retry.attempt - 1} of ${retry.attempts}; attempt ${retry.attempt} of ${retry.attempts} started after a ${seconds(retry.waitedMs)} wait (each attempt may take up to ${seconds(retry.timeoutMs)}).`;
}

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

/**
 * The SDK's per-request timeout, capped a moment past the deadline: the caller's signal ends the
 * request at the deadline itself, so what the caller sees is the run's time limit, not a timeout.
 */
function requestTimeout(timeoutMs: number, deadline: number | undefined): number {
  return Math.max(1, Math.floor(capAtDeadline(timeoutMs, deadline === undefined ? undefined : deadline + 1000)));
}

/** Where each front end takes the model settings, for messages that tell people what to check. */
const KEY_SETTING = "the model API key (`OPENAI_API_KEY`; the Action's `openai-api-key` input; the CLI's `--api-key`)";
const MODEL_SETTING = "the model name (`BLUEPRINT_MODEL` or `model:` in `.github/blueprint.yml`; the Action's `model` input; the CLI's `--model`)";

/** The statuses the SDK retries (with backoff); others fail at the first attempt. */
const retried = (status: number | undefined) => status === 408 || status === 409 || status === 429 || (status !== undefined && status >= 500);

function toModelError(error: unknown, where: string, attempts: number): Error {
  if (error instanceof OpenAI.APIUserAbortError) return error;
  if (error instanceof OpenAI.APIConnectionTimeoutError) return new ModelError(`the model endpoint at ${where} did not answer in time`);
  if (error instanceof OpenAI.APIConnectionError) return new ModelError(`the model endpoint at ${where} could not be reached`);
  if (error instanceof OpenAI.APIError) {
    const status = error.status ?? "an error";
    if (error.status === 401 || error.status === 403) {
      return new ModelError(`the model endpoint at ${where} refused the API key (HTTP ${status}); check ${KEY_SETTING}`);
    }
    if (error.status === 404) return new ModelError(`the model endpoint at ${where} does not know the model (HTTP 404); check ${MODEL_SETTING}`);
    return new ModelError(`the model endpoint at ${where} answered HTTP ${status}${attempts > 1 && retried(error.status) ? ` after ${attempts} attempts` : ""}`);
  }
  return new ModelError(`the model request failed: ${error instanceof Error ? error.message : String(error)}`);
}
