// Kept, not plugin-throttling's Bottleneck: no public option spares a request Bottleneck's timer turns, and in the
// load bench permission read → 👀 took 0.47–0.61 s through Bottleneck against 0.13–0.55 s here (measured with `npm run
// bench -- load`).
import { setTimeout as sleep } from "node:timers/promises";
import type { Octokit } from "@octokit/rest";
import { throttling } from "@octokit/plugin-throttling";
import { Slots } from "../shared/slots.js";

/**
 * GitHub's pacing for one installation's budget, in this process, without timers when nothing has
 * to wait. The same rules as `@octokit/plugin-throttling` with `@octokit/plugin-retry`: writes start
 * at least a second apart, writes that notify people three seconds apart, searches two; at most ten
 * requests at once; token requests one at a time; rate limits waited out when `onRateLimit` says so;
 * server errors retried after 1, 4 and 9 seconds.
 *
 * Why not those plugins: Bottleneck, under both, takes several timer turns per request even when
 * nothing waits. On an event loop busy with a burst of webhooks each turn costs the whole burst's
 * backlog, and a 👀 took hundreds of milliseconds to leave. Across processes (Redis) the gaps are
 * reserved through `shared` (one round trip per write), not Bottleneck's clustering: its limiters'
 * Redis scripts and messages took a third of a queue worker's CPU in the load bench, and each
 * installation's first write waited for its limiters to be set up in Redis.
 */
export interface PacingOptions {
  /**
   * Whose pacing this is (`<installation>-<budget>`): every Octokit with the same id shares one set of
   * gates and slots, as plugin-throttling's `throttle.id` does — a worker holds an Octokit per job
   * token, and an installation's tokens must not each get a second's gap of their own. Without an
   * id, the Octokit is paced alone.
   */
  id?: string;
  /**
   * A rate limit was hit (`secondary`: GitHub's abuse limits; `primary`: the hourly quota):
   * return true to wait `retryAfterS` seconds and try again.
   */
  onRateLimit(
    kind: "primary" | "secondary",
    retryAfterS: number,
    request: { method: string; url: string },
    retryCount: number,
  ): boolean;
  /** Milliseconds between writes, notifying writes and searches (tests shorten them). */
  gapsMs?: { write: number; notification: number; search: number };
  /** One unit of retry-after and back-off, in milliseconds (1000; tests shorten it). */
  secondMs?: number;
  /** Retries of a failed request (3). */
  retries?: number;
  /**
   * Gates shared with other processes (every worker on one Redis), by `id`: the gaps between writes,
   * notifying writes and searches hold across them. Requests in flight are still counted per process.
   */
  shared?: SharedGates;
}

/**
 * Start times reserved beyond this process: `reserve` takes the next start at least `gapMs` after the last one reserved
 * under `key`, and resolves to the milliseconds to wait for it.
 */
export interface SharedGates {
  reserve(key: string, gapMs: number): Promise<number>;
}

const MAX_AT_ONCE = 10;
/** As plugin-retry: these statuses are answers, not failures. */
const DO_NOT_RETRY = new Set([400, 401, 403, 404, 410, 422, 451]);
/** GitHub's default when a secondary rate limit names no wait (as plugin-throttling). */
const SECONDARY_FALLBACK_S = 60;
/** The plugin's own list of paths that notify people (a static it exports with its types). */
const { triggersNotification } = throttling;

/** Start times at least `gapMs` apart, first come first served; resolves at once when the gap has passed. */
class Gate {
  private nextAt = 0;

  pass(gapMs: number): Promise<void> | null {
    const now = Date.now();
    const at = Math.max(now, this.nextAt);
    this.nextAt = at + gapMs;
    return at > now ? sleep(at - now) : null;
  }
}

/** One budget's gates and slots. */
interface Pace {
  writes: Gate;
  notifications: Gate;
  searches: Gate;
  slots: Slots;
  tokenSlot: Slots;
}

const newPace = (): Pace => ({
  writes: new Gate(),
  notifications: new Gate(),
  searches: new Gate(),
  slots: new Slots(MAX_AT_ONCE),
  tokenSlot: new Slots(1),
});

/**
 * Paces by id, most recently used last; the oldest are forgotten beyond this many (a forgotten gap is at most 3 s of
 * history).
 */
const paces = new Map<string, Pace>();
const MAX_PACES = 10_000;

function sharedPace(id: string): Pace {
  let pace = paces.get(id);
  if (pace) paces.delete(id);
  else pace = newPace();
  paces.set(id, pace);
  if (paces.size > MAX_PACES) paces.delete(paces.keys().next().value ?? id);
  return pace;
}

/** One Octokit's settings, resolved from its `pacing` option, and the gates and slots it paces by. */
interface Pacer {
  options: PacingOptions;
  gaps: { write: number; notification: number; search: number };
  second: number;
  retries: number;
  basePath: string;
  pace: Pace;
}

type RequestOptions = { method: string; url: string };
type Request = (options: RequestOptions) => Promise<{ data: unknown }>;

/** The Octokit plugin: `new (Octokit.plugin(pacing))({ pacing: {...} })`. */
export function pacing(
  octokit: Pick<Octokit, "hook">,
  octokitOptions: { pacing?: PacingOptions; baseUrl?: string },
): Record<string, never> {
  const pacer = newPacer(octokitOptions);
  const wrap = (request: Request, requestOptions: RequestOptions) => sendWithRetries(pacer, request, requestOptions);
  (octokit.hook.wrap as (name: "request", hook: typeof wrap) => void)("request", wrap);
  return {};
}

function newPacer(octokitOptions: { pacing?: PacingOptions; baseUrl?: string }): Pacer {
  const options = octokitOptions.pacing;
  if (!options) throw new Error("pacing: the `pacing` option (with onRateLimit) is required");
  return {
    options,
    gaps: options.gapsMs ?? { write: 1_000, notification: 3_000, search: 2_000 },
    second: options.secondMs ?? 1_000,
    retries: options.retries ?? 3,
    // Routes are GitHub's paths; on GitHub Enterprise the API lives under /api/v3.
    basePath: new URL(octokitOptions.baseUrl ?? "https://api.github.com").pathname.replace(/\/$/, ""),
    pace: options.id === undefined ? newPace() : sharedPace(options.id),
  };
}

/**
 * Shared gates when there are any (and an id to share them by); this process's own while they fail (their owner logs
 * why).
 */
function pass(pacer: Pacer, gate: Gate, lane: string, gapMs: number): Promise<void> | null {
  const { shared, id } = pacer.options;
  return shared && id !== undefined
    ? shared.reserve(`${id}:${lane}`, gapMs).then(
        (waitMs) => (waitMs > 0 ? sleep(waitMs) : undefined),
        () => gate.pass(gapMs) ?? undefined,
      )
    : gate.pass(gapMs);
}

async function sendWithRetries(pacer: Pacer, request: Request, requestOptions: RequestOptions) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await sendOnce(pacer, request, requestOptions);
    } catch (error) {
      const waitMs = retryWait(pacer, error, attempt);
      if (waitMs === null) throw error;
      await sleep(waitMs);
    }
  }
}

async function sendOnce(pacer: Pacer, request: Request, requestOptions: RequestOptions) {
  const { basePath, gaps } = pacer;
  const { writes, notifications, searches, slots, tokenSlot } = pacer.pace;
  const method = requestOptions.method.toUpperCase();
  const fullPath = new URL(requestOptions.url, "http://github.test").pathname;
  const path = basePath && fullPath.startsWith(`${basePath}/`) ? fullPath.slice(basePath.length) : fullPath;
  const isToken = isTokenRequest(method, path);
  // GitHub Enterprise serves GraphQL at /api/graphql, beside the REST API's /api/v3.
  const isGraphql = path.startsWith("/graphql") || fullPath === "/api/graphql";
  const isWrite = !isToken && ((method !== "GET" && method !== "HEAD") || isGraphql);
  // Only the waits that are due take a timer; a request with nothing to wait for leaves at once.
  if (isWrite) await pass(pacer, writes, "write", gaps.write);
  if (isWrite && !isGraphql && triggersNotification(path))
    await pass(pacer, notifications, "notification", gaps.notification);
  if (method === "GET" && path.startsWith("/search/")) await pass(pacer, searches, "search", gaps.search);
  const response = await (isToken ? tokenSlot : slots).run(() => request(requestOptions));
  if (isGraphql) checkGraphqlErrors(requestOptions, response);
  return response;
}

/** GraphQL answers 200 with its failures in `errors`: throw the ones to wait out or retry. */
function checkGraphqlErrors(requestOptions: RequestOptions, response: { data: unknown }): void {
  const errors = (response.data as { errors?: { type?: string; message?: string }[] } | undefined)?.errors;
  if (errors?.some((error) => error.type === "RATE_LIMITED")) {
    throw failure("GraphQL Rate Limit Exceeded", 403, requestOptions, response, true);
  }
  if (errors?.[0]?.message && /Something went wrong while executing your query/.test(errors[0].message)) {
    throw failure(errors[0].message, 500, requestOptions, response);
  }
}

/** Milliseconds to wait before trying again, or null to give up. */
function retryWait(pacer: Pacer, error: unknown, attempt: number): number | null {
  if (!isHttpFailure(error)) return null;
  const headers = error.response?.headers ?? {};
  const limit = rateLimitWait(
    error.status,
    error.message,
    (name) => headers[name]?.toString(),
    error.graphqlRateLimited === true,
  );
  if (limit)
    return pacer.options.onRateLimit(
      limit.kind,
      limit.seconds,
      { method: error.request.method, url: error.request.url },
      attempt,
    )
      ? limit.seconds * pacer.second
      : null;
  const backoff = backoffWait(error.status, attempt, pacer.retries);
  return backoff === null ? null : backoff * pacer.second;
}

/** An error from Octokit's request (its RequestError, matched by shape) or from the checks above. */
interface HttpFailure {
  status: number;
  message: string;
  request: { method: string; url: string };
  response?: { headers: Record<string, string | number | undefined> };
  graphqlRateLimited?: boolean;
}

function isHttpFailure(error: unknown): error is HttpFailure {
  const candidate = error as Partial<HttpFailure> | null;
  return error instanceof Error && typeof candidate?.status === "number" && typeof candidate.request?.url === "string";
}

function failure(
  message: string,
  status: number,
  request: { method: string; url: string },
  response: unknown,
  graphqlRateLimited = false,
): HttpFailure & Error {
  return Object.assign(new Error(message), {
    name: "HttpError",
    status,
    request,
    response: response as HttpFailure["response"],
    graphqlRateLimited,
  });
}

/**
 * GitHub's rate limits, as its documentation and plugin-throttling read them: a secondary limit
 * (named so, or a 429) waits `retry-after`, else a minute; a spent hourly quota waits for its reset.
 * Null when the answer is not a rate limit.
 */
export function rateLimitWait(
  status: number,
  message: string,
  header: (name: string) => string | null | undefined,
  quotaSpent = false,
): { kind: "primary" | "secondary"; seconds: number } | null {
  if (status !== 403 && status !== 429) return null;
  const exhausted = quotaSpent || header("x-ratelimit-remaining") === "0";
  if (/\bsecondary rate\b/i.test(message) || (status === 429 && !exhausted)) {
    const after = Number(header("retry-after"));
    return { kind: "secondary", seconds: after > 0 ? after : SECONDARY_FALLBACK_S };
  }
  if (!exhausted) return null;
  return {
    kind: "primary",
    seconds: Math.max(Math.ceil((Number(header("x-ratelimit-reset") ?? 0) * 1000 - Date.now()) / 1000) + 1, 0),
  };
}

/**
 * Seconds before retry `attempt + 1` of a failed request (1, 4, 9, as plugin-retry), or null when its status is an
 * answer or the retries are spent.
 */
export function backoffWait(status: number, attempt: number, retries: number): number | null {
  if (status < 400 || DO_NOT_RETRY.has(status) || attempt >= retries) return null;
  return (attempt + 1) ** 2;
}

function isTokenRequest(method: string, path: string): boolean {
  return (
    (method === "PATCH" && /^\/applications\/[^/]+\/token\/scoped$/.test(path)) ||
    (method === "POST" &&
      (/^\/applications\/[^/]+\/token$/.test(path) ||
        /^\/app\/installations\/[^/]+\/access_tokens$/.test(path) ||
        path === "/login/oauth/access_token"))
  );
}
