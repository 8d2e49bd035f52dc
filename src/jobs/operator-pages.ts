import http, { type IncomingMessage, type ServerResponse } from "node:http";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { AggregatorRegistry, type Registry } from "prom-client";
import type { DiskUse } from "../shared/disk-usage.js";
import type { JobBackend } from "./backend.js";
import type { JobMetrics } from "./metrics.js";

type Handler = (req: IncomingMessage, res: ServerResponse) => boolean | void | Promise<boolean | void>;

/** Where /metrics finds the metrics of workers this process forked (their registries are their own). */
export interface WorkerMetricsSource {
  workerMetrics(): Promise<unknown>;
}

/**
 * `GET /healthz`: 200 with the queue's depth, its workers, this process's event-loop delay since the
 * last look, and (`disk`) the work directory's size, bound and free space, as JSON. `GET /metrics`:
 * Prometheus text (this process's and its local worker's).
 */
export function serveOperatorPages(
  addHandler: (handler: Handler) => void,
  backend: Pick<JobBackend, "stats"> & Partial<WorkerMetricsSource>,
  metrics: JobMetrics,
  disk?: () => Promise<DiskUse>,
): void {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  addHandler(async (req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (req.method !== "GET" || (path !== "/healthz" && path !== "/metrics")) return false;
    if (path === "/metrics") {
      const own = await metrics.registry.getMetricsAsJSON();
      const workers = ((await backend.workerMetrics?.().catch(() => null)) ?? []) as Awaited<
        ReturnType<Registry["getMetricsAsJSON"]>
      >;
      const text =
        workers.length > 0
          ? await AggregatorRegistry.aggregate([own, workers]).metrics()
          : await metrics.registry.metrics();
      res.writeHead(200, { "content-type": metrics.registry.contentType });
      res.end(text);
      return true;
    }
    // Health answers even when the queue cannot be read (Redis away): the process itself is up.
    const queue = await backend
      .stats()
      .catch((error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }));
    const ms = (ns: number) => Math.round(ns / 1e4) / 100;
    const eventLoopDelayMs = { p50: ms(loop.percentile(50)), p99: ms(loop.percentile(99)), max: ms(loop.max) };
    loop.reset();
    const diskUse = disk
      ? {
          disk: await disk().catch((error: unknown) => ({
            error: error instanceof Error ? error.message : String(error),
          })),
        }
      : {};
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ status: "ok", queue, ...diskUse, eventLoopDelayMs }));
    return true;
  });
}

/**
 * The same pages on a server of their own (`npm run worker` with PORT set: for probes and Prometheus); 404 for anything
 * else.
 */
export function listenWithOperatorPages(
  port: number,
  host: string,
  backend: Pick<JobBackend, "stats"> & Partial<WorkerMetricsSource>,
  metrics: JobMetrics,
  disk?: () => Promise<DiskUse>,
): http.Server {
  const handlers: Handler[] = [];
  serveOperatorPages((handler) => handlers.push(handler), backend, metrics, disk);
  const server = http.createServer(
    (req, res) =>
      void Promise.all(handlers.map((handle) => handle(req, res))).then(
        (handled) => handled.some(Boolean) || res.writeHead(404).end(),
      ),
  );
  return server.listen(port, host);
}
