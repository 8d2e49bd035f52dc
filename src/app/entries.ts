import { fileURLToPath } from "node:url";

/**
 * The compiled entries (lib/*.js) of the processes a process forks, one file each, so `ps` names
 * what runs: the local worker (intake, no Redis), the job runner (under a worker), the queue worker
 * (intake with Redis and BLUEPRINT_WORKERS).
 */
export const CHILD_ENTRIES = {
  localWorker: entry("local-worker.js"),
  jobRunner: entry("job-runner.js"),
  queueWorker: entry("worker.js"),
} as const;

function entry(name: string): string {
  return fileURLToPath(new URL(`../${name}`, import.meta.url));
}
