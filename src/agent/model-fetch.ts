import { untilAborted } from "../shared/deadline.js";

/**
 * The fetch the model client hands to the SDK. Each call is one attempt, and it returns only once the
 * whole answer is in: the endpoint must start answering within `firstChunkMs` and never go quiet
 * for longer than `idleMs`, however long the (streamed) answer takes. An attempt that breaks one of
 * these limits, or breaks off, fails inside fetch, where the SDK retries it like any failed
 * connection; the SDK's own time limit is left to the run's deadline.
 */
/** Far more than any answer (a whole file written in one tool call is a few hundred kilobytes). */
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

export interface AttemptLimits {
  firstChunkMs: number;
  idleMs: number;
  /** The most one answer may weigh: an endpoint that keeps sending cannot fill this process's memory. */
  maxBytes: number;
  /** Attempts in all (1 + retries), for the retry report. */
  attempts: number;
  onRetry?: ((retry: ModelRetry) => void) | undefined;
}

/** Another attempt at a model request, after the previous one failed. */
export interface ModelRetry {
  /** The attempt that is starting now: 2 for the first retry. */
  attempt: number;
  /** Attempts in all (1 + retries). */
  attempts: number;
  /** Why the previous attempt failed, after "The model endpoint": "answered HTTP 503", "did not answer within 60 s". */
  reason: string;
  /** The back-off before this attempt. */
  waitedMs: number;
  /** How soon each attempt must start answering (and the longest silence within an answer). */
  timeoutMs: number;
}

export interface WatchedFetch {
  fetch: typeof fetch;
  /** Why the last attempt failed (after "The model endpoint"), for the final error; null if it did not. */
  lastFailure(): string | null;
  /** The last attempt's answer when it was an HTTP error: where it was asked, and the start of what it said. */
  lastRefusal(): EndpointRefusal | null;
}

/**
 * An HTTP error answer, kept whole enough to tell "no such model" from "no such path" (the SDK keeps only OpenAI's
 * error shape).
 */
export interface EndpointRefusal {
  status: number;
  url: string;
  body: string;
}

/** Enough of an error body to read what it says; the rest is never needed. */
const MAX_REFUSAL_CHARS = 2000;

/** An attempt that broke a time limit or broke off: the SDK retries it as a failed connection. */
class AttemptFailure extends Error {
  constructor(
    readonly reason: string,
    timedOut: boolean,
  ) {
    // The SDK counts an error that says "timed out" as a timeout (APIConnectionTimeoutError at the end).
    super(`the model endpoint ${reason}${timedOut ? " (timed out)" : ""}`);
  }
}

export function watchAttempts(base: typeof fetch, limits: AttemptLimits): WatchedFetch {
  let failed: { reason: string; at: number } | null = null;
  let last: string | null = null;
  let refusal: EndpointRefusal | null = null;
  const watched: typeof fetch = async (input, init) => {
    // The SDK retries inside one call and says nothing; each attempt carries its retry count.
    const retryCount = Number(new Headers(init?.headers).get("x-stainless-retry-count") ?? "0");
    if (retryCount > 0 && failed) {
      limits.onRetry?.({
        attempt: retryCount + 1,
        attempts: limits.attempts,
        reason: failed.reason,
        waitedMs: Date.now() - failed.at,
        timeoutMs: limits.firstChunkMs,
      });
    }
    failed = null;
    last = null;
    refusal = null;
    try {
      const response = await wholeAnswer(base, input, init, limits);
      if (!response.ok) {
        failed = { reason: `answered HTTP ${response.status}`, at: Date.now() };
        const body = await response
          .clone()
          .text()
          .catch(() => "");
        refusal = {
          status: response.status,
          url: input instanceof Request ? input.url : String(input),
          body: body.slice(0, MAX_REFUSAL_CHARS),
        };
      }
      return response;
    } catch (error) {
      const reason = error instanceof AttemptFailure ? error.reason : "could not be reached";
      failed = { reason, at: Date.now() };
      last = reason;
      throw error;
    }
  };
  return { fetch: watched, lastFailure: () => last, lastRefusal: () => refusal };
}

/** One attempt, read to its end within the first-chunk and idle limits; the body is handed on whole. */
async function wholeAnswer(
  base: typeof fetch,
  input: Parameters<typeof fetch>[0],
  init: RequestInit | undefined,
  limits: AttemptLimits,
): Promise<Response> {
  const controller = new AbortController();
  const outer = init?.signal;
  const forward = () => controller.abort(outer?.reason);
  if (outer?.aborted) forward();
  else outer?.addEventListener("abort", forward, { once: true });
  let timer: NodeJS.Timeout | undefined;
  let silence: AttemptFailure | null = null;
  const expectWithin = (ms: number, reason: string) => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      silence = new AttemptFailure(reason, true);
      controller.abort(silence);
    }, ms);
  };
  let answering = false;
  try {
    expectWithin(limits.firstChunkMs, `did not answer within ${seconds(limits.firstChunkMs)}`);
    const response = await base(input, { ...init, signal: controller.signal });
    answering = true;
    if (!response.body) return response;
    const reader = response.body.getReader();
    const chunks: Uint8Array[] = [];
    let bytes = 0;
    for (;;) {
      // A fetch that does not watch its signal is still left at the limit.
      const { done, value } = await untilAborted(reader.read(), controller.signal).catch((error: unknown) => {
        void reader.cancel().catch(() => {});
        throw error;
      });
      if (done) break;
      if (value.byteLength === 0) continue;
      bytes += value.byteLength;
      if (bytes > limits.maxBytes) {
        void reader.cancel().catch(() => {});
        throw new AttemptFailure(`sent an answer of more than ${limits.maxBytes} bytes`, false);
      }
      chunks.push(value);
      expectWithin(limits.idleMs, `went quiet for ${seconds(limits.idleMs)} in the middle of an answer`);
    }
    return new Response(Buffer.concat(chunks), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  } catch (error) {
    if (silence) throw silence;
    if (outer?.aborted || error instanceof AttemptFailure) throw error;
    if (answering) throw new AttemptFailure("broke off its answer", false);
    throw error;
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", forward);
  }
}

export function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}
