import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ScriptedToolCall {
  name: string;
  arguments: unknown;
  /** The call's id; by default one unique per call. */
  id?: string;
}

export type ScriptedReply =
  | {
      toolCalls?: ScriptedToolCall[];
      content?: string;
      usage?: { prompt: number; completion: number; cached?: number };
      /** Answer with one JSON completion even when asked to stream, as an endpoint that cannot stream does. */
      whole?: true;
      /** Streamed: the pause before each chunk (default none). */
      chunkDelayMs?: number;
      /** Streamed: how many pieces the content and each call's arguments are cut into (default 3). */
      pieces?: number;
    }
  | { status: number; body?: unknown }
  /** Never answers, not even the headers. */
  | { hang: true }
  /** Sends the headers of a stream, then nothing. */
  | { silentStream: true };

export interface ModelRequest {
  model: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  messages: Array<{
    role: string;
    content?: unknown;
    tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
    tool_call_id?: string;
  }>;
  tools?: Array<{ function: { name: string } }>;
}

/** A function may answer with a promise: the request is held until it settles (e.g. until the test releases it). */
export type Script = Array<ScriptedReply | ((request: ModelRequest) => ScriptedReply | Promise<ScriptedReply>)>;

export interface ModelServer {
  url: string;
  requests: ModelRequest[];
  /**
   * In order: `request N` when request N (0-based) arrives, `closed N` when its client hung up before it was answered.
   */
  events: string[];
  close(): Promise<void>;
}

/**
 * A scripted OpenAI-compatible chat-completions endpoint on 127.0.0.1; one reply per request, in
 * order. A request with `stream: true` gets its reply as server-sent chunks (content and tool-call
 * arguments cut into pieces, the usage in a last chunk without choices), as OpenAI streams it.
 */
export async function startModelServer(script: Script): Promise<ModelServer> {
  const requests: ModelRequest[] = [];
  const events: string[] = [];
  let index = 0;
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", () => {
      // The model list, as OpenAI-compatible servers answer it (the eval asks for it before its first task).
      if (req.method === "GET" && req.url?.endsWith("/models")) {
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "list", data: [] }));
        return;
      }
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
        res.writeHead(404).end();
        return;
      }
      const request = JSON.parse(raw) as ModelRequest;
      const number = requests.length;
      requests.push(request);
      events.push(`request ${number}`);
      res.on("close", () => {
        if (!res.writableEnded) events.push(`closed ${number}`);
      });
      const entry = script[index++];
      const position = index;
      const scripted =
        typeof entry === "function"
          ? entry(request)
          : (entry ?? { status: 500, body: { error: { message: "script exhausted" } } });
      if (scripted instanceof Promise) void scripted.then((reply) => answer(res, request, reply, position));
      else answer(res, request, scripted, position);
    });
  });
  const answer = (res: http.ServerResponse, request: ModelRequest, reply: ScriptedReply, index: number) => {
    if (res.destroyed) return;
    if ("hang" in reply) {
      hanging.add(res);
      return;
    }
    if ("status" in reply) {
      res.writeHead(reply.status, { "content-type": "application/json" });
      res.end(JSON.stringify(reply.body ?? { error: { message: `scripted ${reply.status}` } }));
      return;
    }
    if ("silentStream" in reply) {
      hanging.add(res);
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.flushHeaders();
      return;
    }
    const toolCalls = (reply.toolCalls ?? []).map((call, n) => ({
      id: call.id ?? `call_${index}_${n}`,
      type: "function" as const,
      function: {
        name: call.name,
        arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments),
      },
    }));
    const scriptedUsage = reply.usage ?? { prompt: 100, completion: 20, cached: 0 };
    const usage = {
      prompt_tokens: scriptedUsage.prompt,
      completion_tokens: scriptedUsage.completion,
      total_tokens: scriptedUsage.prompt + scriptedUsage.completion,
      prompt_tokens_details: { cached_tokens: scriptedUsage.cached ?? 0 },
    };
    const finishReason = toolCalls.length > 0 ? "tool_calls" : "stop";
    if (request.stream && !reply.whole) {
      const chunk = (choices: unknown[], extra: object = {}) => ({
        id: `chatcmpl-${index}`,
        object: "chat.completion.chunk",
        created: Math.floor(Date.now() / 1000),
        model: request.model,
        choices,
        ...extra,
      });
      const delta = (fields: object, finish: string | null = null) =>
        chunk([{ index: 0, delta: fields, finish_reason: finish }]);
      const pieces = reply.pieces ?? 3;
      const events = [
        delta({ role: "assistant", content: "" }),
        ...cut(reply.content ?? "", pieces).map((content) => delta({ content })),
        ...toolCalls.flatMap((call, n) => [
          delta({
            tool_calls: [
              { index: n, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } },
            ],
          }),
          ...cut(call.function.arguments, pieces).map((piece) =>
            delta({ tool_calls: [{ index: n, function: { arguments: piece } }] }),
          ),
        ]),
        delta({}, finishReason),
        ...(request.stream_options?.include_usage ? [chunk([], { usage })] : []),
      ];
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      void (async () => {
        for (const event of events) {
          if (reply.chunkDelayMs) await new Promise((resolve) => setTimeout(resolve, reply.chunkDelayMs));
          if (res.destroyed) return;
          res.write(`data: ${JSON.stringify(event)}\n\n`);
        }
        res.end("data: [DONE]\n\n");
      })();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id: `chatcmpl-${index}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: request.model,
        choices: [
          {
            index: 0,
            finish_reason: finishReason,
            message: {
              role: "assistant",
              content: reply.content ?? null,
              ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
            },
          },
        ],
        usage,
      }),
    );
  };
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    events,
    close: () =>
      new Promise((resolve) => {
        hanging.forEach((res) => res.destroy());
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** `text` in `count` pieces of about equal length (none for empty text). */
function cut(text: string, count: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / count));
  const pieces: string[] = [];
  for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size));
  return pieces;
}

/** A valid plan for submit_plan. */
export function samplePlan(overrides: Record<string, unknown> = {}) {
  return {
    title: "Add retry to the HTTP client",
    summary: "Wrap requests in a retry helper with exponential backoff.",
    steps: [
      {
        id: "S1",
        title: "Add a retry helper",
        details: "Create `src/retry.js` exporting `retry(fn, attempts)`.",
        files: ["src/retry.js"],
        deps: [],
        risk: null,
        complexity: "low",
      },
      {
        id: "S2",
        title: "Use the helper in the client",
        details: "Call `retry` around `fetch` in `src/client.js`.",
        files: ["src/client.js"],
        deps: ["S1"],
        risk: "Retries may hide errors",
        complexity: null,
      },
    ],
    risks: ["Retrying non-idempotent requests"],
    verification: ["npm test"],
    ...overrides,
  };
}
