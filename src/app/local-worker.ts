import { pino } from "pino";
import { loadEnv } from "../config/env.js";
import { tokenPorts } from "../jobs/token-ports.js";
import { serveLocalJobs } from "../jobs/local-worker-server.js";
import { JobMetrics } from "../jobs/metrics.js";
import { createWorkflowDeps } from "./create-deps.js";
import { CHILD_ENTRIES } from "./entries.js";
import "./engine-tables.js";

/**
 * The local worker (src/local-worker.ts): the engine, once the intake has handed over the hidden-state key, behind the
 * job runtime over the memory store (`jobs/local-jobs.ts`).
 */
export function startLocalWorker(): void {
  const env = loadEnv();
  const log = pino({ name: "blueprint-local-worker", level: env.LOG_LEVEL });
  serveLocalJobs({
    makeDeps: (stateKey) => createWorkflowDeps(env, log, [], stateKey),
    ports: tokenPorts(env, log),
    concurrency: env.BLUEPRINT_CONCURRENCY,
    metrics: new JobMetrics({ processMetrics: false }),
    log,
    runnerEntry: CHILD_ENTRIES.jobRunner,
  });
}
