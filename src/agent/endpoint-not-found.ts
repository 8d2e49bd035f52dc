import type { EndpointRefusal } from "./model-fetch.js";

/** Where each front end takes the model settings, for messages that tell people what to check. */
export const MODEL_SETTING =
  "the model name (`BLUEPRINT_MODEL` or `model:` in `.github/blueprint.yml`; the Action's `model` input; the CLI's `--model`)";
const BASE_URL_SETTING =
  "the endpoint's base URL (`OPENAI_BASE_URL`; the Action's `openai-base-url` input; the CLI's `--base-url`)";

/**
 * How endpoints say that they do not serve a model, in their error bodies: OpenAI's `model_not_found`
 * code and "The model `x` does not exist", Azure's `DeploymentNotFound`, vLLM's same words, Ollama's `model "x" not
 * found, try
 * pulling it first`, LiteLLM's "Invalid model name passed in model=x", OpenRouter's "x is not a valid
 * model ID". A 404 that says none of this is a path nothing answers at.
 */
const UNKNOWN_MODEL = [
  /"code"\s*:\s*"(model_not_found|DeploymentNotFound)"/,
  /\bmodel\b[^\n]{0,120}?\b(does not exist|not found)\b/i,
  /\b(invalid|unknown|no such) model( name| id)?\b/i,
  /\bnot a valid model\b/i,
];

/** Whether an error answer's body says the model is unknown (rather than the path). */
export function saysModelUnknown(body: string): boolean {
  return UNKNOWN_MODEL.some((pattern) => pattern.test(body));
}

/**
 * A 404 from the model endpoint, in words a person can act on: the model is unknown (when the body
 * says so), or nothing answers at the URL that was asked, most often a base URL without its `/v1`.
 */
export function describeNotFound(where: string, model: string, refusal: EndpointRefusal | null): string {
  if (refusal && saysModelUnknown(refusal.body)) return describeUnknownModel(where, model, refusal);
  const said = refusal ? quoted(refusal.body) : "";
  const url = refusal?.url ?? `${where.replace(/\/+$/, "")}/chat/completions`;
  return `nothing answers at ${url} (HTTP 404${said}): ${where} does not look like an OpenAI-compatible API's base URL. ${baseUrlAdvice(where)} Check ${BASE_URL_SETTING}`;
}

/**
 * An endpoint that said it does not serve the model (a 404, or the 400 some servers such as LiteLLM and OpenRouter
 * answer).
 */
export function describeUnknownModel(where: string, model: string, refusal: EndpointRefusal): string {
  return `the model endpoint at ${where} does not know the model \`${model}\` (HTTP ${refusal.status}${quoted(refusal.body)}); check ${MODEL_SETTING}`;
}

/** The likely fix: OpenAI-compatible servers (Ollama, vLLM, LiteLLM, llama.cpp) serve the API under `/v1`. */
function baseUrlAdvice(where: string): string {
  let path: string;
  try {
    path = new URL(where).pathname;
  } catch {
    return "";
  }
  if (/\/v\d+(\/|$)/.test(path))
    return "Its path is probably wrong: the base URL is the part before `/chat/completions`.";
  return `It has no \`/v1\`: OpenAI-compatible servers usually answer under it, so try ${where.replace(/\/+$/, "")}/v1.`;
}

/** The start of what the endpoint said, on one line, when it said anything. */
function quoted(body: string): string {
  const text = body
    .replace(/<[^>]*>/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return text ? `: "${text.slice(0, 160)}${text.length > 160 ? "…" : ""}"` : "";
}
