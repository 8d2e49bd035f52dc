import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, it } from "vitest";
import { JobMetrics, telemetryFor } from "../../src/jobs/metrics.js";
import { serveOperatorPages } from "../../src/jobs/operator-pages.js";

let server: http.Server | null = null;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** /metrics as Prometheus scrapes it, from the operator pages on a real HTTP server. */
async function scrape(metrics: JobMetrics): Promise<string> {
  const handlers: Array<Parameters<Parameters<typeof serveOperatorPages>[0]>[0]> = [];
  serveOperatorPages(
    (handler) => handlers.push(handler),
    { stats: async () => ({ backend: "redis", waiting: 0, running: 0, workers: 1, concurrency: 1, ready: true }) },
    metrics,
  );
  server = http.createServer(
    (req, res) =>
      void Promise.all(handlers.map((handle) => handle(req, res))).then(
        (handled) => handled.some(Boolean) || res.writeHead(404).end(),
      ),
  );
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
}

it("the engine's telemetry shows on /metrics: model tokens by run kind and type, and step durations", async () => {
  const metrics = new JobMetrics({ processMetrics: false });
  const telemetry = telemetryFor(metrics);
  telemetry.modelUsage("plan", { prompt: 1200, completion: 300, cached: 0, requests: 2 });
  telemetry.modelUsage("build", { prompt: 5000, completion: 700, cached: 4000, requests: 3 });
  telemetry.modelUsage("build", { prompt: 1000, completion: 100, cached: 0, requests: 1 });
  telemetry.stepSeconds(2.5);
  telemetry.stepSeconds(40);

  const text = await scrape(metrics);
  expect(text).toContain('blueprint_model_tokens_total{kind="plan",type="prompt"} 1200');
  expect(text).toContain('blueprint_model_tokens_total{kind="plan",type="completion"} 300');
  expect(text).toContain('blueprint_model_tokens_total{kind="build",type="prompt"} 6000');
  expect(text).toContain('blueprint_model_tokens_total{kind="build",type="completion"} 800');
  expect(text).toContain('blueprint_model_tokens_total{kind="build",type="cached"} 4000');
  // Nothing cached while planning: no series claims zero-valued traffic.
  expect(text).not.toContain('kind="plan",type="cached"');
  expect(text).toContain("blueprint_step_duration_seconds_count 2");
  expect(text).toContain("blueprint_step_duration_seconds_sum 42.5");
  expect(text).toContain('blueprint_step_duration_seconds_bucket{le="5"} 1');
});
