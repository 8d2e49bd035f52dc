import { createSecretKey } from "node:crypto";
import type { StateKey } from "../github/state-marker.js";
import type { TokenPorts } from "../github/token-port.js";
import type { Logger } from "../shared/logger.js";
import type { WorkflowDeps } from "../workflow/deps.js";
import { SHUTDOWN_REASON } from "./backend.js";
import { LocalJobs } from "./local-jobs.js";
import type { Job } from "./job.js";
import { JobRunner } from "./job-runner.js";
import { LocalJobTokens } from "./token-relay.js";
import { toLocalWorkerSchema, type FromLocalWorker, type ToLocalWorker } from "./protocol.js";
import { telemetryFor, type JobMetrics } from "./metrics.js";
import { parentChannel } from "./ipc-batch.js";

export interface LocalWorkerServerOptions {
  /** The engine, made once the intake has handed over the hidden-state key. */
  makeDeps(stateKey: StateKey): WorkflowDeps;
  ports: TokenPorts;
  concurrency: number;
  metrics: JobMetrics;
  log: Logger;
  /** The compiled job runner (lib/job-runner.js): lane work runs there; without it, in this process. */
  runnerEntry?: string;
}

/** The local worker once started: its jobs, and the job runner lane work goes to (if any). */
interface Started {
  backend: LocalJobs;
  runner: JobRunner | null;
}

/**
 * The local worker `npm start` forks: takes jobs from its parent over IPC and runs them through
 * the job runtime over the memory store (`LocalJobs`: thread lanes, BLUEPRINT_CONCURRENCY), with each
 * job's own token. The intake claimed each delivery: the worker does not claim it again.
 */
export function serveLocalJobs(options: LocalWorkerServerOptions): void {
  let started: Started | null = null;
  const outbox = parentChannel<ToLocalWorker, FromLocalWorker>({
    messages: toLocalWorkerSchema,
    receive,
    log: options.log,
    name: "the local worker",
    // The parent gone (crashed or killed) means no one can hand us jobs or hear us: stop.
    onParentGone: () =>
      void (started?.backend.shutdown(SHUTDOWN_REASON, 20_000) ?? Promise.resolve()).finally(() => process.exit(0)),
  });
  // Checked on arrival by the intake (fromLocalWorkerSchema); typed here.
  const send = (message: FromLocalWorker) => outbox.send(message);
  const tokens = LocalJobTokens.fromIntake(send, options.log);

  function receive(message: ToLocalWorker): void {
    if (message.type === "start") {
      started ??= start(
        options,
        send,
        tokens,
        createSecretKey(Buffer.from(message.stateKey, "base64")),
        message.stateKey,
      );
      send({ type: "ready" });
    } else if (!started) options.log.error({ type: message.type }, "the local worker got a message before its start");
    else if (message.type === "shutdown") {
      const { backend, runner } = started;
      void backend.shutdown(message.reason, message.timeoutMs).finally(() => {
        runner?.stop();
        outbox.flush();
        process.exit(0);
      });
    } else handle(started.backend, message, { send, tokens, metrics: options.metrics });
  }
}

/** The intake's jobs, questions and token answers, once the worker has started. */
function handle(
  backend: LocalJobs,
  message: Exclude<ToLocalWorker, { type: "start" | "shutdown" }>,
  to: { send: (message: FromLocalWorker) => void; tokens: LocalJobTokens; metrics: JobMetrics },
): void {
  switch (message.type) {
    case "job":
    case "resume":
      to.tokens.keep(message.job.deliveryId, message.token);
      if (message.type === "job") backend.take({ job: message.job, keys: message.keys });
      else backend.resume({ job: message.job, keys: message.keys });
      return;
    case "remove":
      void backend.removeRepositories(message.removal);
      return;
    case "ask": {
      const answer =
        message.what === "stats"
          ? backend.stats()
          : message.what === "idle"
            ? backend.idle()
            : to.metrics.registry.getMetricsAsJSON();
      void answer.then((value) => to.send({ type: "answer", id: message.id, value: value ?? null }));
      return;
    }
    case "token":
      to.tokens.asker.answer(message);
      return;
  }
}

/** The job runtime on the hidden-state key the intake sent, with lane work in a job runner when there is one. */
function start(
  options: LocalWorkerServerOptions,
  send: (message: FromLocalWorker) => void,
  tokens: LocalJobTokens,
  stateKey: StateKey,
  stateKeyText: string,
): Started {
  const deps = options.makeDeps(stateKey);
  const runner = options.runnerEntry
    ? new JobRunner({
        entry: options.runnerEntry,
        stateKey: stateKeyText,
        log: options.log,
        telemetry: telemetryFor(options.metrics),
      })
    : null;
  const backend = new LocalJobs({
    deps,
    concurrency: options.concurrency,
    metrics: options.metrics,
    onRelease: (keys) => send({ type: "release", keys }),
    onSettled: (job, phase) => send({ type: "settled", deliveryId: job.deliveryId, phase }),
    // Fresh from the intake when it waited long: lane work reads GitHub here first (a build's approval).
    portsFor: async (job) => options.ports.portsFor(job, await tokens.fresh(job)),
    ...(runner
      ? {
          workReady: () => runner.isReady,
          runWork: inRunner(runner, tokens),
          removeFiles: async (removal) => runner.removeRepositories(removal),
        }
      : {}),
  });
  return { backend, runner };
}

/** Lane work in the job runner, with the job's token fresh (and renewed through the intake as it works). */
function inRunner(runner: JobRunner, tokens: LocalJobTokens) {
  return async (job: Job, signal: AbortSignal) =>
    runner.run(job, await tokens.fresh(job), signal, () => tokens.fresh(job));
}
