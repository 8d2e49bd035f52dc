import { saysModelUnknown } from "../src/agent/endpoint-not-found.js";

export type Preflight = { ok: true; note: string | null } | { ok: false; problem: string };

const OPENAI = /^https:\/\/api\.openai\.com(\/|$)/;

/**
 * Before the first task: does the endpoint answer, as an OpenAI-compatible API, to this key? Asks
 * `GET /models` (no tokens spent); an endpoint without that route is asked for a one-token chat
 * completion instead. Each failure is said in words, instead of a task log's "HTTP 502" from the proxy.
 */
export async function preflight(
  baseUrl: string,
  apiKey: string | undefined,
  model: string | undefined,
  timeoutMs = 15_000,
): Promise<Preflight> {
  const base = baseUrl.replace(/\/+$/, "");
  if (!apiKey && OPENAI.test(base))
    return { ok: false, problem: `no API key for ${base}: set OPENAI_API_KEY or give --api-key.` };
  const headers: Record<string, string> = {
    "content-type": "application/json",
    ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
  };
  const ask = (path: string, init: RequestInit = {}) =>
    fetch(`${base}${path}`, { ...init, headers, signal: AbortSignal.timeout(timeoutMs) });
  let answer: Response;
  try {
    answer = await ask("/models");
  } catch (error) {
    return { ok: false, problem: unreachable(base, error) };
  }
  if (answer.status === 404 || answer.status === 405) {
    // Some servers have no model list: a one-token completion tells whether the chat API is there.
    try {
      answer = await ask("/chat/completions", {
        method: "POST",
        body: JSON.stringify({
          model: model ?? "gpt-4.1-mini",
          max_tokens: 1,
          messages: [{ role: "user", content: "ping" }],
        }),
      });
    } catch (error) {
      return { ok: false, problem: unreachable(base, error) };
    }
  }
  const said = await answer.text().catch(() => "");
  if (answer.status === 401 || answer.status === 403)
    return {
      ok: false,
      problem: `${answer.status}: key rejected by ${base}${apiKey ? "" : " (no key was given: set OPENAI_API_KEY or --api-key)"}${detail(said)}`,
    };
  // A chat API that answered "no such model" is there: the model name is what is wrong.
  if ((answer.status === 404 || answer.status === 400) && saysModelUnknown(said))
    return {
      ok: false,
      problem: `${answer.status}: ${base} does not know the model "${model ?? "gpt-4.1-mini"}": check --model${detail(said)}`,
    };
  if (answer.status === 404 || answer.status === 405)
    return { ok: false, problem: `404: no OpenAI-compatible API at ${base} (missing /v1?)${detail(said)}` };
  if (!answer.ok)
    return {
      ok: false,
      problem: `${answer.status}: ${base} answered with an error before any task started${detail(said)}`,
    };
  return { ok: true, note: model ? modelNote(said, model, base) : null };
}

function unreachable(base: string, error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : "";
  if (code === "ECONNREFUSED") return `connection refused at ${base}: is the server running, on that port?`;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return `${new URL(base).hostname} does not resolve (${base})`;
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError"))
    return `no answer from ${base} within the preflight's limit`;
  return `${base} could not be reached: ${cause instanceof Error ? cause.message : String(cause)}${code ? ` (${code})` : ""}`;
}

function detail(body: string): string {
  const text = body.trim().replace(/\s+/g, " ");
  return text ? ` — it said: ${text.slice(0, 200)}` : "";
}

/** A model the list does not hold is worth a warning, not a refusal: some servers list only some. */
function modelNote(body: string, model: string, base: string): string | null {
  let listed: unknown;
  try {
    listed = (JSON.parse(body) as { data?: unknown }).data;
  } catch {
    return null;
  }
  if (!Array.isArray(listed) || listed.length === 0) return null;
  const ids = listed
    .map((entry: unknown) => (typeof entry === "object" && entry !== null && "id" in entry ? String(entry.id) : ""))
    .filter((id) => id !== "");
  return ids.includes(model)
    ? null
    : `${base} does not list the model "${model}" (it lists ${ids.slice(0, 8).join(", ")}${ids.length > 8 ? ", …" : ""})`;
}
