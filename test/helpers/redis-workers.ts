import { loadEnv } from "../../src/config/env.js";
import type { Removal } from "../../src/jobs/job.js";
import { JobMetrics } from "../../src/jobs/metrics.js";
import { startRedisWorkers, type RedisWorkers, type RunWork } from "../../src/jobs/redis-worker.js";
import { tokenPorts } from "../../src/jobs/token-ports.js";
import { createWorkflowDeps } from "../../src/app/create-deps.js";
import { tempDir } from "./git-repo.js";
import { JOB_SECRET, recordingLog, sealer } from "./redis-jobs.js";

export interface TestWorkersOptions {
  /** The worker's work directory (a fresh temporary one by default). */
  workdir?: string;
  /** More of the worker's environment. */
  env?: Record<string, string>;
  runWork?: RunWork;
  removeFiles?: (removal: Removal) => void;
}

/**
 * A queue worker process's workers on the Redis at `redisUrl`, as `npm run worker` starts them (two slots, so a job
 * never waits behind the one before it), logging into a recording log. Close them with `workers.close()`.
 */
export async function startTestWorkers(
  redisUrl: string,
  options: TestWorkersOptions = {},
): Promise<{ workers: RedisWorkers; log: ReturnType<typeof recordingLog> }> {
  const log = recordingLog();
  const env = loadEnv({
    BLUEPRINT_WORKDIR: options.workdir ?? tempDir("blueprint-workdir-"),
    BLUEPRINT_STATE_SECRET: JOB_SECRET,
    PATH: process.env.PATH ?? "",
    ...options.env,
  });
  const workers = await startRedisWorkers({
    redisUrl,
    deps: createWorkflowDeps(env, log),
    ports: tokenPorts(env, log),
    sealer,
    concurrency: 2,
    lockMs: 30_000,
    metrics: new JobMetrics({ processMetrics: false }),
    ...(options.runWork ? { runWork: options.runWork } : {}),
    ...(options.removeFiles ? { removeFiles: options.removeFiles } : {}),
  });
  return { workers, log };
}
