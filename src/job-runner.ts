import { pino } from "pino";
import { loadEnv } from "./config/env.js";
import { tokenPorts } from "./jobs/token-ports.js";
import { serveJobRunner } from "./jobs/job-runner-server.js";
import { createWorkflowDeps } from "./workflow/create-deps.js";

/**
 * A worker's job runner (the local worker's, or a Redis queue worker's): lane work only, at a lower CPU priority, in its own process.
 * Like its worker, its environment holds neither the App's private key nor the webhook secret. Wiring only.
 */
const env = loadEnv();
const log = pino({ name: "blueprint-job-runner", level: env.LOG_LEVEL });
serveJobRunner({ makeDeps: (stateKey) => createWorkflowDeps(env, log, [], stateKey), ports: tokenPorts(env, log), log });
