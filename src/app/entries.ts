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

/** Beside the entries: lib/, one directory above this file's translation (lib/app/), or beside a bundled entry. */
function entry(name: string): string {
  const here = new URL(".", import.meta.url);
  return fileURLToPath(new URL(name, here.pathname.endsWith("/app/") ? new URL("..", here) : here));
}
