import type { Queue } from "bullmq";
import type { Sealer } from "../credentials/index.js";
import type { TokenRefresher } from "../credentials/redis.js";
import type { TokenPorts } from "../github/token-port.js";
import type { WorkflowDeps } from "../workflow/deps.js";
import type { JobRunner } from "./job-runner.js";
import type { JobMetrics } from "./metrics.js";
import type { PermissionCache } from "./permission-cache.js";
import type { RedisLanes } from "./redis-lanes.js";

/** Lane work run elsewhere (a job runner process, as JobRunner.run does it): resolves when the use case returns. */
export type RunWork = (...args: Parameters<JobRunner["run"]>) => Promise<void>;

export type WorkerLog = WorkflowDeps["log"];

/** What a queue worker needs to read a job's token from Redis and have it renewed by the intakes. */
export interface TokenKeeper {
  log: WorkerLog;
  sealer: Sealer;
  refresher: TokenRefresher;
}

/**
 * What one Redis worker process's parts share, made once by `startRedisWorkers`: the triage and work
 * processors (redis-work.ts), the job's token (redis-worker-tokens.ts), its thread (redis-thread-hold.ts).
 */
export interface RedisWorkerContext extends TokenKeeper {
  /** The engine, reporting to this process's metrics. */
  deps: WorkflowDeps;
  ports: TokenPorts;
  metrics: JobMetrics;
  lockMs: number;
  concurrency: number;
  lanes: RedisLanes;
  workQueue: Queue;
  /** How many processes work the work queue (BullMQ's CLIENT LIST, parsed: kept for a few seconds). */
  workQueueWorkers(): Promise<number>;
  permissions: PermissionCache;
  /** The lane work running here, by BullMQ id: `/cancel` and a hand-over abort it. */
  controllers: Map<string, AbortController>;
  stopping(): boolean;
  runWork?: RunWork | undefined;
}
