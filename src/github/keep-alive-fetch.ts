// Ablation 2026-11-28 (npm run bench ablate, load 5–10): 308–329 µs CPU per Octokit request vs Node's fetch 536–544.
// Our own keep-alive fetch over node:http, not undici's Agent: undici's `request` was tried (issue #29)
// and costs the same CPU per request (150–250 µs against 160–245 µs), but its requests go past nock,
// which the tests use to double GitHub at the HTTP boundary (the Redis worker tests then reached for
// the real api.github.com). undici's own fetch, which nock does see, took 2.5× the CPU per request.
import http from "node:http";
import https from "node:https";

/** What Octokit reads of a fetch response. */
export interface LightResponse {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly url: string;
  readonly redirected: boolean;
  readonly headers: LightHeaders;
  readonly body: ReadableStream<Uint8Array> | null;
  text(): Promise<string>;
  json(): Promise<unknown>;
  arrayBuffer(): Promise<ArrayBuffer>;
}

export type KeepAliveFetch = (url: string | URL, init?: RequestInit) => Promise<LightResponse>;

/** Response headers, lower-cased, as fetch's Headers iterates and gets them. */
export class LightHeaders {
  private readonly entries: Array<[string, string]>;

  constructor(raw: http.IncomingHttpHeaders) {
    this.entries = Object.entries(raw)
      .filter((entry): entry is [string, string | string[]] => entry[1] !== undefined)
      .map(([name, value]) => [name, Array.isArray(value) ? value.join(", ") : value]);
  }

  get(name: string): string | null {
    const wanted = name.toLowerCase();
    return this.entries.find(([key]) => key === wanted)?.[1] ?? null;
  }

  has(name: string): boolean {
    return this.get(name) !== null;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries[Symbol.iterator]();
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 20;
/** As undici's defaults: no answer (or no next chunk of one) for this long fails the request. */
const IDLE_TIMEOUT_MS = 300_000;

/**
 * `fetch` for Octokit over node:http and node:https with keep-alive sockets, answering with the
 * body already read. Node's own fetch (undici) costs several times more CPU per request — its
 * request and response objects, web streams and a connection pool per origin — and a worker's
 * triage makes hundreds of small GitHub calls in a burst, on the loop every 👀 waits for.
 * Redirects are followed as fetch follows them; a body that is not text or bytes goes to Node's fetch.
 */
export function keepAliveFetch(options: { maxSockets?: number } = {}): KeepAliveFetch {
  const agents = {
    "http:": new http.Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 32 }),
    "https:": new https.Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 32 }),
  };
  interface Hop {
    method: string;
    headers: Record<string, string>;
    body: Buffer | null;
  }
  const send = async (url: URL, hop: Hop, init: RequestInit, hops: number): Promise<LightResponse> => {
    const { method, body } = hop;
    const headers = body ? { ...hop.headers, "content-length": String(body.length) } : hop.headers;
    const response = await exchange(
      url,
      { method, headers, agent: agents[url.protocol as "http:" | "https:"], signal: init.signal ?? undefined },
      body,
    );
    const location = response.headers.location;
    if (REDIRECTS.has(response.statusCode ?? 0) && location && (init.redirect ?? "follow") === "follow") {
      if (hops >= MAX_REDIRECTS) throw new TypeError("fetch failed", { cause: new Error("redirect count exceeded") });
      const next = new URL(location, url);
      // As fetch: a 303, or a 301/302 answering a POST, becomes a GET without its body; another origin never sees the
      // credentials.
      const toGet =
        response.statusCode === 303 ||
        ((response.statusCode === 301 || response.statusCode === 302) && method === "POST");
      const nextHeaders = { ...hop.headers };
      delete nextHeaders["content-length"];
      if (next.origin !== url.origin) delete nextHeaders.authorization;
      return send(
        next,
        { headers: nextHeaders, ...(toGet ? { method: "GET", body: null } : { method, body }) },
        init,
        hops + 1,
      );
    }
    return lightResponse(url, response, hops > 0);
  };
  return async (input, init = {}) => {
    const url = new URL(String(input));
    if (url.protocol !== "http:" && url.protocol !== "https:")
      throw new TypeError(`fetch failed: unsupported protocol ${url.protocol}`);
    const body = bytesOf(init.body);
    if (init.body != null && body === null) return (await fetch(url, init)) as unknown as LightResponse;
    init.signal?.throwIfAborted();
    return send(
      url,
      { method: (init.method ?? "GET").toUpperCase(), headers: plainHeaders(init.headers), body },
      init,
      0,
    );
  };
}

interface Received {
  statusCode: number | undefined;
  statusMessage: string | undefined;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function exchange(
  url: URL,
  options: http.RequestOptions & { signal?: AbortSignal | undefined },
  body: Buffer | null,
): Promise<Received> {
  const { signal, ...requestOptions } = options;
  const request = (url.protocol === "https:" ? https : http).request;
  return new Promise((resolve, reject) => {
    const req = request(url, requestOptions, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({
          statusCode: res.statusCode,
          statusMessage: res.statusMessage,
          headers: res.headers,
          body: Buffer.concat(chunks),
        }),
      );
      res.on("error", (error) => reject(failed(error, signal)));
    });
    const onAbort = () => req.destroy(signal?.reason instanceof Error ? signal.reason : abortError());
    signal?.addEventListener("abort", onAbort, { once: true });
    req.setTimeout(IDLE_TIMEOUT_MS, () => req.destroy(new Error(`no answer for ${IDLE_TIMEOUT_MS / 1000} s`)));
    req.on("error", (error) => reject(failed(error, signal)));
    req.on("close", () => signal?.removeEventListener("abort", onAbort));
    req.end(body ?? undefined);
  });
}

/**
 * Errors as fetch throws them: an abort as the signal's reason (an AbortError), anything else as "fetch failed" with
 * its cause.
 */
function failed(error: Error, signal: AbortSignal | undefined): Error {
  if (signal?.aborted) return signal.reason instanceof Error ? signal.reason : abortError();
  return new TypeError("fetch failed", { cause: error });
}

function abortError(): Error {
  return new DOMException("This operation was aborted", "AbortError");
}

function lightResponse(url: URL, received: Received, redirected: boolean): LightResponse {
  const status = received.statusCode ?? 0;
  const bytes = received.body;
  const text = async () => bytes.toString("utf8");
  const arrayBuffer = async () =>
    bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  return {
    status,
    statusText: received.statusMessage ?? "",
    ok: status >= 200 && status < 300,
    url: url.href,
    redirected,
    headers: new LightHeaders(received.headers),
    get body() {
      return bytes.length === 0 ? null : (new Blob([new Uint8Array(bytes)]).stream() as ReadableStream<Uint8Array>);
    },
    text,
    json: async () => JSON.parse(await text()) as unknown,
    arrayBuffer,
  };
}

function bytesOf(body: RequestInit["body"]): Buffer | null {
  if (body == null) return null;
  if (typeof body === "string") return Buffer.from(body);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return null;
}

function plainHeaders(headers: RequestInit["headers"]): Record<string, string> {
  const plain: Record<string, string> = {};
  // Octokit passes a plain object; anything else goes through Headers for its rules. (Not `instanceof
  // Headers`: its first mention loads Node's whole fetch, which this module is here to avoid.)
  if (headers && Object.getPrototypeOf(headers) === Object.prototype) {
    for (const [name, value] of Object.entries(headers)) plain[name.toLowerCase()] = String(value);
  } else new Headers(headers ?? {}).forEach((value, name) => (plain[name] = value));
  return plain;
}
