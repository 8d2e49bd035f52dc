import http from "node:http";
import type { AddressInfo } from "node:net";

export interface PhaseUsage {
  /** Requests the endpoint answered with a 2xx (the engine's own count of "answered model requests"). */
  requests: number;
  /** Requests that got an error status or no answer. */
  errors: number;
  prompt: number;
  cached: number;
  completion: number;
}

export interface MeteringProxy {
  /** What the CLI gets as its base URL. */
  url: string;
  /** Requests from now on are counted under this phase. */
  setPhase(phase: string): void;
  usage(phase: string): PhaseUsage;
  /** How many submitted plans the CLI refused in this phase's conversation (0: the first plan was valid). */
  rejectedPlans(phase: string): number;
  close(): Promise<void>;
}

export const emptyUsage = (): PhaseUsage => ({ requests: 0, errors: 0, prompt: 0, cached: 0, completion: 0 });

const HOP_BY_HOP = new Set([
  "host",
  "connection",
  "content-length",
  "transfer-encoding",
  "keep-alive",
  "accept-encoding",
]);

interface CompletionUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

/**
 * A pass-through proxy in front of the model endpoint that adds up the token usage each answer reports.
 * The CLI prints usage only as text; reading it off the wire counts exactly what the endpoint billed,
 * per phase, without changing the CLI.
 */
export async function startMeteringProxy(upstream: string): Promise<MeteringProxy> {
  const base = upstream.replace(/\/+$/, "");
  const phases = new Map<string, PhaseUsage>();
  let phase = "other";
  const current = () => {
    const existing = phases.get(phase);
    if (existing) return existing;
    const fresh = emptyUsage();
    phases.set(phase, fresh);
    return fresh;
  };

  const rejected = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const counted = current();
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      if (body) rejected.set(phase, Math.max(rejected.get(phase) ?? 0, rejectedPlans(body)));
      const abort = new AbortController();
      res.on("close", () => abort.abort());
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === "string" && !HOP_BY_HOP.has(name)) headers[name] = value;
      }
      fetch(`${base}${req.url ?? ""}`, { method: req.method ?? "GET", headers, body, signal: abort.signal })
        .then((answer) => relay(answer, res, counted))
        .catch((error: unknown) => {
          if (res.headersSent) {
            // The answer broke off midway: the client sees the cut, as it would without the proxy.
            counted.errors += 1;
            res.destroy();
            return;
          }
          counted.errors += 1;
          if (res.destroyed) return;
          res.writeHead(502, { "content-type": "application/json" });
          res.end(
            JSON.stringify({
              error: {
                message: `eval proxy: the model endpoint ${base} did not answer: ${error instanceof Error ? error.message : String(error)}`,
              },
            }),
          );
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    setPhase: (next) => {
      phase = next;
    },
    usage: (name) => ({ ...(phases.get(name) ?? emptyUsage()) }),
    rejectedPlans: (name) => rejected.get(name) ?? 0,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Headers that describe the upstream connection or encoding (fetch has already decoded the body), not the answer. */
const NOT_RELAYED = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding"]);

/**
 * Passes the answer on as it arrives, chunk by chunk, with its status and headers (`Retry-After`
 * included): the CLI's silence limit then measures the endpoint's silences, as it does without the
 * proxy, instead of the time the whole answer takes. Usage is read from the text seen on the way.
 */
async function relay(answer: Response, res: http.ServerResponse, counted: PhaseUsage): Promise<void> {
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => {
    if (!NOT_RELAYED.has(name)) headers[name] = value;
  });
  res.writeHead(answer.status, headers);
  res.flushHeaders();
  const contentType = answer.headers.get("content-type") ?? "";
  const streamed = contentType.includes("text/event-stream");
  const reader = new UsageReader(streamed);
  if (answer.body) {
    const decoder = new TextDecoder();
    for await (const chunk of answer.body) {
      if (res.destroyed) return;
      res.write(chunk);
      reader.add(decoder.decode(chunk, { stream: true }));
    }
  }
  res.end();
  if (!answer.ok) {
    counted.errors += 1;
    return;
  }
  counted.requests += 1;
  const reported = reader.usage();
  if (!reported) return;
  counted.prompt += reported.prompt_tokens ?? 0;
  counted.completion += reported.completion_tokens ?? 0;
  counted.cached += reported.prompt_tokens_details?.cached_tokens ?? 0;
}

/** Keeps what it needs to find the usage: a whole JSON answer, or only the latest usage event of a stream. */
class UsageReader {
  private text = "";
  private found: CompletionUsage | null = null;
  constructor(private readonly streamed: boolean) {}

  add(piece: string): void {
    this.text += piece;
    if (!this.streamed) return;
    const lines = this.text.split("\n");
    this.text = lines.pop() ?? "";
    for (const line of lines) {
      const data = /^data:\s*(.*)$/.exec(line.trim())?.[1];
      if (data && data !== "[DONE]" && data.includes('"usage"')) this.found = answerUsage(data) ?? this.found;
    }
  }

  usage(): CompletionUsage | null {
    if (this.streamed) {
      this.add("\n");
      return this.found;
    }
    return answerUsage(this.text);
  }
}

/** submit_plan calls the CLI answered with anything but acceptance, in one request's conversation. */
function rejectedPlans(body: Buffer): number {
  let request: {
    messages?: Array<{
      role?: string;
      tool_call_id?: string;
      tool_calls?: Array<{ id?: string; function?: { name?: string } }>;
      content?: unknown;
    }>;
  };
  try {
    request = JSON.parse(body.toString("utf8")) as typeof request;
  } catch {
    return 0;
  }
  const messages = request.messages ?? [];
  const submits = new Set(
    messages
      .flatMap((message) => message.tool_calls ?? [])
      .filter((call) => call.function?.name === "submit_plan")
      .map((call) => call.id),
  );
  return messages.filter(
    (message) =>
      message.role === "tool" &&
      submits.has(message.tool_call_id) &&
      !String(message.content).startsWith("Plan submitted"),
  ).length;
}

function answerUsage(text: string): CompletionUsage | null {
  try {
    return (JSON.parse(text) as { usage?: CompletionUsage | null }).usage ?? null;
  } catch {
    return null;
  }
}
