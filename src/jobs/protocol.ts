import { createSecretKey, type KeyObject } from "node:crypto";
import { z } from "zod";
import { jobTokenSchema } from "../credentials/index.js";
import { jobSchema, removalSchema } from "./job.js";

/**
 * Every message between Blueprint's processes, over a forked child's IPC channel: plain data, checked
 * on arrival (the parent's SupervisedChild, the child's parentChannel), sent in batches (ipc-batch.ts).
 * Three kinds of child speak it, each a subset: the local worker under the intake (no Redis), the job
 * runner under its worker, and the Redis queue worker an intake forks. Tokens travel in memory only:
 * never written anywhere, never in a child's environment.
 */

// Words every child kind shares.

/** Parent → child, first: the child sets itself up and answers "ready"; nothing else is sent before. */
const start = z.object({ type: z.literal("start") });
/** A start with the hidden-state key (derived, base64), so the child never needs the secret it comes from. */
const startWithKey = start.extend({ stateKey: z.string().min(1) });

/** The hidden-state key a "start" carries, as the child uses it. */
export function stateKeyFrom(stateKey: string): KeyObject {
  return createSecretKey(Buffer.from(stateKey, "base64"));
}
const ready = z.object({ type: z.literal("ready") });
/** A question to the child, answered by an "answer" of the same id (see PendingAnswers). */
const ask = <const What extends readonly [string, ...string[]]>(what: What) =>
  z.object({ type: z.literal("ask"), id: z.number().int(), what: z.enum(what) });
const answer = z.object({ type: z.literal("answer"), id: z.number().int(), value: z.unknown() });
/** Stop taking work; what runs stops at its next safe point (within `timeoutMs`); then exit. */
const shutdown = z.object({ type: z.literal("shutdown"), reason: z.string(), timeoutMs: z.number() });
/**
 * Child → parent: the token of the job of this delivery expires soon (it waited long, or a build runs
 * long); the parent gets a fresh one. Named by delivery only: a child gets tokens for the jobs its
 * parent handed it, never for a job it describes itself.
 */
const tokenRequest = z.object({ type: z.literal("token-request"), id: z.number().int(), deliveryId: z.string() });
/**
 * The answer to a "token-request": a fresh token, or null when none could be had. With the job's
 * delivery: a child started after one died numbers its requests from 0 again, and must not take an
 * answer meant for its predecessor's request of the same number (another job's token).
 */
const token = z.object({
  type: z.literal("token"),
  id: z.number().int(),
  deliveryId: z.string(),
  token: jobTokenSchema.nullable(),
});
/**
 * An uninstall or repositories removed: their jobs dropped or stopped, their files removed (a running job's once it
 * ends).
 */
const remove = z.object({ type: z.literal("remove"), removal: removalSchema });

/** A job and its claim keys with its token, intake → local worker. */
const handedJob = { job: jobSchema, keys: z.array(z.string()), token: jobTokenSchema };

/** Intake → local worker (`npm start` without Redis): jobs to triage and run on their thread lanes. */
export const toLocalWorkerSchema = z.discriminatedUnion("type", [
  startWithKey,
  z.object({ type: z.literal("job"), ...handedJob }),
  /** A job a worker that died had already triaged: straight back on its thread's lane. */
  z.object({ type: z.literal("resume"), ...handedJob }),
  ask(["stats", "idle", "metrics"]),
  shutdown,
  remove,
  token,
]);
export type ToLocalWorker = z.output<typeof toLocalWorkerSchema>;

/** Local worker → intake. */
export const fromLocalWorkerSchema = z.discriminatedUnion("type", [
  ready,
  /** GitHub could not tell who may command us: forget the claim so a redelivery is handled. */
  z.object({ type: z.literal("release"), keys: z.array(z.string()) }),
  answer,
  /** A job was triaged (it waits or runs on its thread), or nothing of it is left. */
  z.object({ type: z.literal("settled"), deliveryId: z.string(), phase: z.enum(["triaged", "finished"]) }),
  tokenRequest,
]);
export type FromLocalWorker = z.output<typeof fromLocalWorkerSchema>;

/**
 * Worker (local or Redis) → its job runner. The worker triages (permission, 👀, quick answers, thread
 * lanes); the runner only does lane work, so its git processes and prompt building never delay an
 * acknowledgement. The runner stops when its channel closes (no "shutdown").
 */
export const toJobRunnerSchema = z.discriminatedUnion("type", [
  startWithKey,
  /** One job's lane work. */
  z.object({ type: z.literal("run"), id: z.number().int(), job: jobSchema, token: jobTokenSchema }),
  /**
   * The job's signal, aborted with this reason (`/cancel`, shutdown): it stops at its next safe point.
   * `handOver`: its worker is handing it back to the queue (a `HandOver`), not stopping it for good.
   */
  z.object({ type: z.literal("abort"), id: z.number().int(), reason: z.string(), handOver: z.boolean().optional() }),
  remove,
  token,
]);
export type ToJobRunner = z.output<typeof toJobRunnerSchema>;

/** Job runner → worker. */
export const fromJobRunnerSchema = z.discriminatedUnion("type", [
  ready,
  /**
   * The job's use case returned (it reports its own failures on the thread); `handedOver`: it stopped for a hand-over.
   */
  z.object({ type: z.literal("done"), id: z.number().int(), handedOver: z.boolean().optional() }),
  /** For /metrics: a planning run's or a step's model tokens, a step's duration. */
  z.object({
    type: z.literal("usage"),
    kind: z.enum(["plan", "build"]),
    usage: z.object({ prompt: z.number(), completion: z.number(), cached: z.number(), requests: z.number() }),
  }),
  z.object({ type: z.literal("step"), seconds: z.number() }),
  /** A running job's token has less than ten minutes left (a long build): its worker asks the intake. */
  tokenRequest,
]);
export type FromJobRunner = z.output<typeof fromJobRunnerSchema>;

/**
 * Intake → the Redis queue worker it forks (`npm start` with Redis that also works jobs). The worker
 * takes its jobs from Redis: this channel only starts it, asks for its metrics (for the intake's
 * /metrics) and stops it (running jobs go back to the queue at their next safe point).
 */
export const toQueueWorkerSchema = z.discriminatedUnion("type", [start, ask(["metrics"]), shutdown]);
export type ToQueueWorker = z.output<typeof toQueueWorkerSchema>;

export const fromQueueWorkerSchema = z.discriminatedUnion("type", [ready, answer]);
export type FromQueueWorker = z.output<typeof fromQueueWorkerSchema>;

/** What every child may say: "ready" is the supervisor's to hear, "answer" its PendingAnswers'. */
export type ChildAnswer = z.output<typeof answer>;
