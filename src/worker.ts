import { startQueueWorker } from "./app/queue-worker.js";

/**
 * `npm run worker`: works jobs from the Redis queue, with no webhook server and no App key — each
 * job brings an installation token narrowed to its repository, sealed with BLUEPRINT_STATE_SECRET.
 * Triage (👀, permission, quick answers) runs here; lane work in a job runner it forks at a lower CPU
 * priority, so a job's git and prompt building never hold back an acknowledgement. `npm start` with
 * Redis forks one too, over an IPC channel (src/jobs/forked-redis-worker.ts). Wiring only.
 */
await startQueueWorker();
