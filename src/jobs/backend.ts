import type { Accepted } from "./from-webhook.js";
import type { Removal } from "./job.js";

/** What a job stopped by a restart or deploy says on its thread (without Redis, no other worker can take it on). */
export const SHUTDOWN_REASON =
  "Blueprint was shut down (a restart or deploy); comment `/build` or `/plan` again to resume";

/** What an operator sees at /healthz. */
export interface QueueStats {
  /** "local": no Redis, jobs in a local worker (or, in tests, the intake itself). */
  backend: "local" | "redis";
  /** Jobs accepted but not started: waiting for triage, for their thread, or for a free slot. */
  waiting: number;
  running: number;
  /** Worker processes (Redis) or the local worker working jobs; 0 with BLUEPRINT_WORKERS=0. */
  workers: number;
  /** BLUEPRINT_CONCURRENCY: jobs one process runs at once. */
  concurrency: number;
  /**
   * False while a process that works these jobs is still starting (the local worker's job runner); jobs wait meanwhile.
   */
  ready: boolean;
}

/**
 * What an intake hands its jobs to: the local worker (no Redis) or the Redis store, which every worker shares.
 * Intake only calls `submit`; the use cases never know which backend runs them.
 */
export interface JobBackend {
  /**
   * Durably accepts a job unless one of its keys (delivery id, comment or review id) was seen:
   * false for a redelivery, which must start nothing.
   */
  submit(accepted: Accepted): Promise<boolean>;
  stats(): Promise<QueueStats>;
  /**
   * An uninstall or repositories removed from an installation: their jobs received before it are
   * dropped if waiting and stopped at their next safe point if running, and their files in the work
   * directory removed (a running job's once it ends). Needs nothing from GitHub.
   */
  removeRepositories(removal: Removal): Promise<void>;
  /** Resolves when nothing this process accepted or works is left (tests, graceful shutdown). */
  idle(): Promise<void>;
  /**
   * Stops taking work and waits at most `timeoutMs`. Without Redis: running jobs stop at a safe point with
   * `reason`. Redis: they stop at a safe point and go back to the queue, for another worker to resume.
   */
  shutdown(reason: string, timeoutMs: number): Promise<void>;
}
