import { z } from "zod";
import { jobTokenSchema } from "../github/job-token.js";
import { jobSchema } from "./job.js";

/**
 * Local worker → its job runner, over the child process's IPC channel: plain data, validated on
 * arrival. The local worker triages (permission, 👀, quick answers, thread lanes); the runner only
 * does lane work, so its git processes and prompt building never delay an acknowledgement.
 */
export const toRunnerSchema = z.discriminatedUnion("type", [
  /** First: the hidden-state key (derived, base64), as the intake handed it to the local worker. */
  z.object({ type: z.literal("start"), stateKey: z.string().min(1) }),
  /** One job's lane work; the token travels in memory only. */
  z.object({ type: z.literal("run"), id: z.number().int(), job: jobSchema, token: jobTokenSchema }),
  /** The job's signal, aborted with this reason (`/cancel`, shutdown): it stops at its next safe point. */
  z.object({ type: z.literal("abort"), id: z.number().int(), reason: z.string() }),
]);
export type ToRunner = z.output<typeof toRunnerSchema>;

/** Job runner → local worker. */
export const fromRunnerSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("ready") }),
  /** The job's use case returned (it reports its own failures on the thread). */
  z.object({ type: z.literal("done"), id: z.number().int() }),
  /** For /metrics: a planning run's or a step's model tokens, a step's duration. */
  z.object({
    type: z.literal("usage"),
    kind: z.enum(["plan", "build"]),
    usage: z.object({ prompt: z.number(), completion: z.number(), cached: z.number(), requests: z.number() }),
  }),
  z.object({ type: z.literal("step"), seconds: z.number() }),
]);
export type FromRunner = z.output<typeof fromRunnerSchema>;
