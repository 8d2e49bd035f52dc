import { Job as BullJob, Queue } from "bullmq";
import { Redis } from "ioredis";
import type { Job } from "../../src/jobs/job.js";
import { sealToken, Sealer } from "../../src/credentials/index.js";
import { signWire } from "../../src/jobs/job-wire.js";
import type { Logger } from "../../src/workflow/deps.js";
import { INSTALLATION_ID, INSTALLATION_TOKEN } from "./github-double.js";
import { PATIENCE_MS } from "./patience.js";
import { TEST_STATE_SECRET } from "./plan-state.js";

/** The secret the tests' intakes and workers share (the test App's too). */
export const JOB_SECRET = TEST_STATE_SECRET;
export const sealer = new Sealer(JOB_SECRET);

export const repository = {
  owner: "Codertocat",
  name: "Hello-World",
  cloneUrl: "https://github.com/Codertocat/Hello-World.git",
  defaultBranch: "main",
  htmlUrl: "https://github.com/Codertocat/Hello-World",
};
let nextCommentId = 7;
/** What every job here carries; each its own comment, as each command is (Blueprint acknowledges a comment once). */
const common = () => ({
  installationId: INSTALLATION_ID,
  repository,
  number: 1,
  actor: "maintainer",
  receivedAt: Date.now(),
  commentId: nextCommentId++,
});

export const planJob = (deliveryId: string, changes: Partial<Job> = {}): Job =>
  ({ kind: "plan", deliveryId, ...common(), instructions: "", ...changes }) as Job;
export const helpJob = (deliveryId: string): Job => ({ kind: "help", deliveryId, ...common() });
export const buildJob = (deliveryId: string, changes: Partial<Extract<Job, { kind: "build" }>> = {}): Job => ({
  kind: "build",
  deliveryId,
  ...common(),
  revision: null,
  steps: [],
  force: false,
  fresh: false,
  notes: "",
  commandCreatedAt: new Date().toISOString(),
  ...changes,
});

/** A token an intake sealed for `job`, with `leftMs` to live. */
export const sealedFor = (job: Job, leftMs = 3600_000, by: Sealer = sealer) =>
  sealToken(
    by,
    {
      token: INSTALLATION_TOKEN,
      expiresAt: new Date(Date.now() + leftMs).toISOString(),
      permissions: { contents: "write", issues: "write" },
    },
    job,
  );

/** A job as an intake puts it in `queue` under `id`: signed, its token sealed for it. */
export const signedWire = (queue: string, id: string, job: Job, options: { sealedToken?: string; by?: Sealer } = {}) =>
  signWire(
    options.by ?? sealer,
    { queue, id },
    { job, keys: [], sealedToken: options.sealedToken ?? sealedFor(job, 3600_000, options.by) },
  );

/** A log that keeps what it was told, so tests can find a line and what it named. */
export function recordingLog(): Logger & {
  lines: Array<{ level: string; message: string; fields: Record<string, unknown> }>;
} {
  const lines: Array<{ level: string; message: string; fields: Record<string, unknown> }> = [];
  const at =
    (level: string) =>
    (fields: object, message = "") =>
      void lines.push({ level, message, fields: fields as Record<string, unknown> });
  return { lines, info: at("info"), warn: at("warn"), error: at("error") };
}

/** What `read` gives once it gives something (asked every 25 ms, for up to PATIENCE_MS). */
export async function eventually<T>(read: () => Promise<T | undefined>, what: string): Promise<T> {
  for (const deadline = Date.now() + PATIENCE_MS; Date.now() < deadline;) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`${what} did not happen`);
}

/**
 * The BullMQ job `id` in `queue` once it has finished, read then (a job read before is a snapshot without its outcome).
 */
export function finished(queue: Queue, id: string): Promise<BullJob> {
  return eventually(async () => {
    const state = await queue.getJobState(id);
    return state === "completed" || state === "failed" ? BullJob.fromId(queue, id) : undefined;
  }, `job ${id} in ${queue.name} finishing`);
}

/** The job's data as Redis holds it (the raw hash field), for checking that no token is left in it. */
export async function rawData(redis: Redis, queue: string, id: string): Promise<string | null> {
  return redis.hget(`bull:${queue}:${id}`, "data");
}
