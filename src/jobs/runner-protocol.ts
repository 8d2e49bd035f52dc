import { z } from "zod";
import { jobTokenSchema } from "../github/job-token.js";
import { jobSchema, removalSchema } from "./job.js";

/**
 * Worker (local or Redis) → its job runner, over the child process's IPC channel: plain data, validated on
 * arrival. The worker triages (permission, 👀, quick answers, thread lanes); the runner only
 * does lane work, so its git processes and prompt building never delay an acknowledgement.
 */
export const toRunnerSchema = z.discriminatedUnion("type", [
  /** First: the hidden-state key (derived, base64), as the worker holds it. */
  z.object({ type: z.literal("start"), stateKey: z.string().min(1) }),
  /** One job's lane work; the token travels in memory only. */
  z.object({ type: z.literal("run"), id: z.number().int(), job: jobSchema, token: jobTokenSchema }),
  /**
   * The job's signal, aborted with this reason (`/cancel`, shutdown): it stops at its next safe point.
   * `handOver`: its worker is handing it back to the queue (a `HandOver`), not stopping it for good.
   */
  z.object({ type: z.literal("abort"), id: z.number().int(), reason: z.string(), handOver: z.boolean().optional() }),
  /** An uninstall or repositories removed: their files go from the work directory (a running job's once it ends). */
  z.object({ type: z.literal("remove"), removal: removalSchema }),
  /** The answer to a "token-request": the job's token renewed, or null when none could be had. */
  z.object({ type: z.literal("token"), id: z.number().int(), token: jobTokenSchema.nullable() }),
]);
export type ToRunner = z.output<typeof toRunnerSchema>;

/** Job runner → worker. */
export const fromRunnerSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("ready") }),
  /** The job's use case returned (it reports its own failures on the thread); `handedOver`: it stopped for a hand-over. */
  z.object({ type: z.literal("done"), id: z.number().int(), handedOver: z.boolean().optional() }),
  /** For /metrics: a planning run's or a step's model tokens, a step's duration. */
  z.object({
    type: z.literal("usage"),
    kind: z.enum(["plan", "build"]),
    usage: z.object({ prompt: z.number(), completion: z.number(), cached: z.number(), requests: z.number() }),
  }),
  z.object({ type: z.literal("step"), seconds: z.number() }),
  /**
   * Run `run`'s token has less than ten minutes left (a long build): its worker asks the intake for a
   * fresh one and answers question `id` with a "token".
   */
  z.object({ type: z.literal("token-request"), id: z.number().int(), run: z.number().int() }),
]);
export type FromRunner = z.output<typeof fromRunnerSchema>;
