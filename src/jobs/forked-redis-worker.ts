import { z } from "zod";
import type { Logger } from "../workflow/deps.js";
import { parentChannel } from "./ipc-batch.js";
import type { JobMetrics } from "./metrics.js";
import { lowerPriority, PendingAnswers, SupervisedChild, WORKER_NICENESS } from "./supervised-child.js";

/**
 * `npm start` with Redis that also works jobs: intake → the Redis worker it forks (`lib/worker.js`,
 * as `npm run worker` runs it), over the child's IPC channel. The worker takes its jobs from Redis;
 * this channel only starts it, asks for its metrics (for the intake's /metrics) and stops it.
 */
export const toForkedWorkerSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("start") }),
  z.object({ type: z.literal("ask"), id: z.number().int(), what: z.literal("metrics") }),
  /** Stop taking jobs; running ones go back to the queue at their next safe point; then exit. */
  z.object({ type: z.literal("shutdown") }),
]);
export type ToForkedWorker = z.output<typeof toForkedWorkerSchema>;

export const fromForkedWorkerSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("ready") }),
  z.object({ type: z.literal("answer"), id: z.number().int(), value: z.unknown() }),
]);
export type FromForkedWorker = z.output<typeof fromForkedWorkerSchema>;

/**
 * The intake's side: the worker forked, restarted if it dies (its jobs are taken over from Redis like
 * any dead worker's), its metrics fetched for /metrics. Triage never runs on the intake's event loop.
 */
export class ForkedRedisWorker {
  private readonly child: SupervisedChild<ToForkedWorker, FromForkedWorker>;
  private readonly answers = new PendingAnswers();

  constructor(options: { entry: string; env: NodeJS.ProcessEnv; log: Logger }) {
    this.child = new SupervisedChild<ToForkedWorker, FromForkedWorker>({
      entry: options.entry,
      env: options.env,
      messages: fromForkedWorkerSchema,
      hello: { type: "start" },
      forked: (child) => lowerPriority(child, WORKER_NICENESS, options.log, "the queue worker"),
      onMessage: (message) => this.answers.answer(message.id, message.value),
      onRestart: ({ code, signal, restartInMs, wasReady }) => {
        options.log.error({ code, signal, restartInMs, wasReady }, "the queue worker stopped; starting another (its running jobs are taken over through Redis)");
        if (wasReady) this.answers.dropAll();
      },
    });
  }

  /** The worker's Prometheus metrics as JSON (null if it could not answer within 5 s, not yet started included). */
  workerMetrics(): Promise<unknown> {
    const { id, answer } = this.answers.ask(5_000);
    void this.child.ready.then(() => this.child.send({ type: "ask", id, what: "metrics" }));
    return answer;
  }

  /** Asks the worker to hand its jobs back and exit; kills it if it has not within `timeoutMs`. */
  stop(timeoutMs: number): Promise<void> {
    return this.child.stop({ type: "shutdown" }, timeoutMs);
  }
}

/**
 * The forked worker's side of the channel: ready once `started` resolves, its metrics when asked,
 * and it stops (jobs back to the queue) when told or when the intake is gone. Signals to the process
 * group (Ctrl-C) are the intake's to act on: it tells the worker.
 */
export function answerIntake(options: { started: Promise<unknown>; metrics: JobMetrics; stop: () => Promise<void> }): void {
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= options.stop().finally(() => {
      outbox.flush();
      process.exit(0);
    }));
  const outbox = parentChannel<FromForkedWorker>((raw) => {
    const parsed = toForkedWorkerSchema.safeParse(raw);
    if (!parsed.success) return;
    const message = parsed.data;
    if (message.type === "start") void options.started.then(() => outbox.send({ type: "ready" }), () => undefined);
    else if (message.type === "ask") void options.metrics.registry.getMetricsAsJSON().then((value) => outbox.send({ type: "answer", id: message.id, value }));
    else void stop();
  });
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => undefined);
  process.on("disconnect", () => void stop());
}
