import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ScriptedToolCall {
  name: string;
  arguments: unknown;
  /** The call's id; by default one unique per call. */
  id?: string;
}

export type ScriptedReply =
  | { toolCalls?: ScriptedToolCall[]; content?: string; usage?: { prompt: number; completion: number; cached?: number } }
  | { status: number; body?: unknown }
  | { hang: true };

export interface ModelRequest {
  model: string;
  messages: Array<{ role: string; content?: unknown; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>; tool_call_id?: string }>;
  tools?: Array<{ function: { name: string } }>;
}

/** A function may answer with a promise: the request is held until it settles (e.g. until the test releases it). */
export type Script = Array<ScriptedReply | ((request: ModelRequest) => ScriptedReply | Promise<ScriptedReply>)>;

export interface ModelServer {
  url: string;
  requests: ModelRequest[];
  /** In order: `request N` when request N (0-based) arrives, `closed N` when its client hung up before it was answered. */
  events: string[];
  close(): Promise<void>;
}

/** A scripted OpenAI-compatible chat-completions endpoint on 127.0.0.1; one reply per request, in order. */
export async function startModelServer(script: Script): Promise<ModelServer> {
  const requests: ModelRequest[] = [];
  const events: string[] = [];
  let index = 0;
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", () => {
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
      const scripted = typeof entry === "function" ? entry(request) : entry ?? { status: 500, body: { error: { message: "script exhausted" } } };
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
    const toolCalls = (reply.toolCalls ?? []).map((call, n) => ({
      id: call.id ?? `call_${index}_${n}`,
      type: "function",
      function: { name: call.name, arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments) },
    }));
    const usage = reply.usage ?? { prompt: 100, completion: 20, cached: 0 };
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
            finish_reason: toolCalls.length > 0 ? "tool_calls" : "stop",
            message: { role: "assistant", content: reply.content ?? null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
          },
        ],
        usage: {
          prompt_tokens: usage.prompt,
          completion_tokens: usage.completion,
          total_tokens: usage.prompt + usage.completion,
          prompt_tokens_details: { cached_tokens: usage.cached ?? 0 },
        },
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

/** A valid plan for submit_plan. */
export function samplePlan(overrides: Record<string, unknown> = {}) {
  return {
    title: "Add retry to the HTTP client",
    summary: "Wrap requests in a retry helper with exponential backoff.",
    steps: [
      { id: "S1", title: "Add a retry helper", details: "Create `src/retry.js` exporting `retry(fn, attempts)`.", files: ["src/retry.js"], deps: [], risk: null, complexity: "low" },
      { id: "S2", title: "Use the helper in the client", details: "Call `retry` around `fetch` in `src/client.js`.", files: ["src/client.js"], deps: ["S1"], risk: "Retries may hide errors", complexity: null },
    ],
    risks: ["Retrying non-idempotent requests"],
    verification: ["npm test"],
    ...overrides,
  };
}
