import type { IncomingMessage, ServerResponse } from "node:http";
import type { JobBackend } from "./backend.js";
import type { JobMetrics } from "./metrics.js";

type Handler = (req: IncomingMessage, res: ServerResponse) => boolean | void | Promise<boolean | void>;

/** `GET /healthz`: 200 with the queue's depth and workers as JSON. `GET /metrics`: Prometheus text. */
export function serveOperatorPages(addHandler: (handler: Handler) => void, backend: JobBackend, metrics: JobMetrics): void {
  addHandler(async (req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (req.method !== "GET" || (path !== "/healthz" && path !== "/metrics")) return false;
    if (path === "/metrics") {
      res.writeHead(200, { "content-type": metrics.registry.contentType });
      res.end(await metrics.registry.metrics());
      return true;
    }
    // Health answers even when the queue cannot be read (Redis away): the process itself is up.
    const queue = await backend.stats().catch((error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }));
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ status: "ok", queue }));
    return true;
  });
}
