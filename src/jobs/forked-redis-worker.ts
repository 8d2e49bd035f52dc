import type { Logger } from "../shared/logger.js";
import { SHUTDOWN_REASON } from "./backend.js";
import { parentChannel } from "./ipc-batch.js";
import type { JobMetrics } from "./metrics.js";
import { fromQueueWorkerSchema, toQueueWorkerSchema, type FromQueueWorker, type ToQueueWorker } from "./protocol.js";
import { SupervisedChild, WORKER_NICENESS } from "./supervised-child.js";

/**
 * `npm start` with Redis that also works jobs: the intake's side of the Redis worker it forks
 * (`lib/worker.js`, as `npm run worker` runs it). The worker is restarted if it dies (its jobs are
 * taken over from Redis like any dead worker's, so none is tracked here), its metrics fetched for
 * /metrics. Triage never runs on the intake's event loop.
 */
export class ForkedRedisWorker {
  private readonly child: SupervisedChild<ToQueueWorker, FromQueueWorker>;

  constructor(options: { entry: string; env: NodeJS.ProcessEnv; log: Logger }) {
    this.child = new SupervisedChild<ToQueueWorker, FromQueueWorker>({
      entry: options.entry,
      env: options.env,
      name: "the queue worker",
      log: options.log,
      afterStop: "(its running jobs are taken over through Redis)",
      messages: fromQueueWorkerSchema,
      hello: { type: "start" },
      niceness: WORKER_NICENESS,
      // It says only "ready" and answers, which the supervisor hears.
      onMessage: () => undefined,
    });
  }

  /** The worker's Prometheus metrics as JSON (null if it could not answer within 5 s, not yet started included). */
  workerMetrics(): Promise<unknown> {
    return this.child.ask((id) => ({ type: "ask", id, what: "metrics" }), 5_000);
  }

  /** Asks the worker to hand its jobs back and exit; kills it if it has not within `timeoutMs`. */
  stop(timeoutMs: number): Promise<void> {
    return this.child.stop({ type: "shutdown", reason: SHUTDOWN_REASON, timeoutMs }, timeoutMs);
  }
}

/**
 * The forked worker's side of the channel: ready once `started` resolves, its metrics when asked,
 * and it stops (jobs back to the queue) when told or when the intake is gone.
 */
export function answerIntake(options: {
  started: Promise<unknown>;
  metrics: JobMetrics;
  stop: () => Promise<void>;
  log: Logger;
}): void {
  parentChannel<ToQueueWorker, FromQueueWorker>({
    messages: toQueueWorkerSchema,
    log: options.log,
    name: "the queue worker",
    start: () => options.started,
    receive: () => undefined,
    answer: () => options.metrics.registry.getMetricsAsJSON(),
    stop: options.stop,
  });
}
