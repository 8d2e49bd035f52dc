import { z } from "zod";
import { jobTokenSchema } from "../github/job-token.js";
import { jobSchema, removalSchema } from "./job.js";

/** Intake → local worker, over the child process's IPC channel: plain data, validated on arrival. */
export const toWorkerSchema = z.discriminatedUnion("type", [
  /** First: the hidden-state key (derived, base64), so the worker never needs the secret it comes from. */
  z.object({ type: z.literal("start"), stateKey: z.string().min(1) }),
  /** The token travels in memory only: never written anywhere, never in the worker's environment. */
  z.object({ type: z.literal("job"), job: jobSchema, keys: z.array(z.string()), token: jobTokenSchema }),
  /** A job a worker that died had already triaged: straight back on its thread's lane. */
  z.object({ type: z.literal("resume"), job: jobSchema, keys: z.array(z.string()), token: jobTokenSchema }),
  z.object({ type: z.literal("ask"), id: z.number(), what: z.enum(["stats", "idle", "metrics"]) }),
  z.object({ type: z.literal("shutdown"), reason: z.string(), timeoutMs: z.number() }),
  /** An uninstall or repositories removed: their jobs dropped or stopped, their files removed. */
  z.object({ type: z.literal("remove"), removal: removalSchema }),
  /**
   * The answer to a "token-request": a fresh token, or null when none could be minted. With the job's
   * delivery: a worker started after one died numbers its requests from 0 again, and must not take
   * an answer meant for its predecessor's request of the same number (another job's token).
   */
  z.object({ type: z.literal("token"), id: z.number(), deliveryId: z.string(), token: jobTokenSchema.nullable() }),
]);
export type ToWorker = z.output<typeof toWorkerSchema>;

/** Local worker → intake. */
export const fromWorkerSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("ready") }),
  /** GitHub could not tell who may command us: forget the claim so a redelivery is handled. */
  z.object({ type: z.literal("release"), keys: z.array(z.string()) }),
  z.object({ type: z.literal("answer"), id: z.number(), value: z.unknown() }),
  /** A job was triaged (it waits or runs on its thread), or nothing of it is left. */
  z.object({ type: z.literal("settled"), deliveryId: z.string(), phase: z.enum(["triaged", "finished"]) }),
  /** A job is about to work with a token that expires soon (it waited long on its thread): intake mints a fresh one. */
  z.object({ type: z.literal("token-request"), id: z.number(), job: jobSchema }),
]);
export type FromWorker = z.output<typeof fromWorkerSchema>;
