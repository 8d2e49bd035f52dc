import { fileURLToPath } from "node:url";
import { pino } from "pino";
import { loadEnv } from "./config/env.js";
import { JobMetrics } from "./jobs/metrics.js";
import { serveLocalJobs } from "./jobs/local-worker-server.js";
import { tokenPorts } from "./jobs/token-ports.js";
import { createWorkflowDeps } from "./workflow/create-deps.js";

/**
 * The embedded queue's worker: `npm start` forks it, so jobs never share the intake's event loop.
 * It triages (permission, 👀, quick answers, thread lanes) and forks a job runner, at a lower CPU
 * priority, for the lane work. Its environment holds neither the App's private key nor the webhook
 * secret. Wiring only.
 */
const env = loadEnv();
const log = pino({ name: "blueprint-local-worker", level: env.LOG_LEVEL });
serveLocalJobs({
  makeDeps: (stateKey) => createWorkflowDeps(env, log, [], stateKey),
  ports: tokenPorts(env, log),
  concurrency: env.BLUEPRINT_CONCURRENCY,
  metrics: new JobMetrics({ processMetrics: false }),
  log,
  runnerEntry: fileURLToPath(new URL("./job-runner.js", import.meta.url)),
});
