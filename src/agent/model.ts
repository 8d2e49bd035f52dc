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
}

/** Chat completions over any OpenAI-compatible endpoint; the SDK retries 429/5xx with backoff. */
export function createModelClient(options: ModelClientOptions): ModelClient {
  const client = new OpenAI({
    apiKey: options.apiKey || "not-set",
    baseURL: options.baseURL || undefined,
    timeout: options.timeoutMs ?? 120_000,
    maxRetries: options.maxRetries ?? 3,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const where = options.baseURL || "https://api.openai.com/v1";
  return {
    model: options.model,
    async complete(messages, tools, request = {}) {
      let completion: OpenAI.Chat.Completions.ChatCompletion;
      try {
        completion = await client.chat.completions.create(
          { model: options.model, messages, tools, tool_choice: "auto" },
          { ...(request.signal ? { signal: request.signal } : {}), timeout: requestTimeout(options.timeoutMs ?? 120_000, request.deadline) },
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
