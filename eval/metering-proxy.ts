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
  close(): Promise<void>;
}

export const emptyUsage = (): PhaseUsage => ({ requests: 0, errors: 0, prompt: 0, cached: 0, completion: 0 });

const HOP_BY_HOP = new Set(["host", "connection", "content-length", "transfer-encoding", "keep-alive", "accept-encoding"]);

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

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const counted = current();
      const abort = new AbortController();
      res.on("close", () => abort.abort());
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === "string" && !HOP_BY_HOP.has(name)) headers[name] = value;
      }
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      fetch(`${base}${req.url ?? ""}`, { method: req.method ?? "GET", headers, body, signal: abort.signal })
        .then(async (answer) => {
          const text = await answer.text();
          const contentType = answer.headers.get("content-type") ?? "application/json";
          if (answer.ok) record(counted, text, contentType);
          else counted.errors += 1;
          res.writeHead(answer.status, { "content-type": contentType });
          res.end(text);
        })
        .catch((error: unknown) => {
          counted.errors += 1;
          if (res.destroyed) return;
          res.writeHead(502, { "content-type": "application/json" });
          res.end(JSON.stringify({ error: { message: `eval proxy: the model endpoint ${base} did not answer: ${error instanceof Error ? error.message : String(error)}` } }));
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
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function record(usage: PhaseUsage, text: string, contentType: string): void {
  usage.requests += 1;
  const reported = contentType.includes("text/event-stream") ? streamedUsage(text) : answerUsage(text);
  if (!reported) return;
  usage.prompt += reported.prompt_tokens ?? 0;
  usage.completion += reported.completion_tokens ?? 0;
  usage.cached += reported.prompt_tokens_details?.cached_tokens ?? 0;
}

function answerUsage(text: string): CompletionUsage | null {
  try {
    return (JSON.parse(text) as { usage?: CompletionUsage | null }).usage ?? null;
  } catch {
    return null;
  }
}

/** A streamed answer reports its usage in one of its last `data:` events (with `stream_options.include_usage`). */
function streamedUsage(text: string): CompletionUsage | null {
  let found: CompletionUsage | null = null;
  for (const line of text.split("\n")) {
    const data = /^data:\s*(.*)$/.exec(line.trim())?.[1];
    if (!data || data === "[DONE]") continue;
    found = answerUsage(data) ?? found;
  }
  return found;
}
