import { pino } from "pino";
import { loadEnv } from "../config/env.js";
import { tokenPorts } from "../jobs/token-ports.js";
import { serveJobRunner } from "../jobs/job-runner-server.js";
import { createWorkflowDeps } from "./create-deps.js";
import "./engine-tables.js";

/** A worker's job runner (src/job-runner.ts): the engine, once its worker has handed over the hidden-state key. */
export function startJobRunner(): void {
  const env = loadEnv();
  const log = pino({ name: "blueprint-job-runner", level: env.LOG_LEVEL });
  serveJobRunner({
    makeDeps: (stateKey) => createWorkflowDeps(env, log, [], stateKey),
    ports: tokenPorts(env, log),
    log,
  });
}
