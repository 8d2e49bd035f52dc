import type { StateKey } from "../github/state-marker.js";
import type { TokenPorts } from "../github/token-port.js";
import type { Logger } from "../shared/logger.js";
import type { WorkflowDeps } from "../workflow/deps.js";
import { LocalJobs } from "./local-jobs.js";
import { JobRunner } from "./job-runner.js";
import { LocalJobTokens } from "./token-relay.js";
import { stateKeyFrom, toLocalWorkerSchema, type FromLocalWorker, type ToLocalWorker } from "./protocol.js";
import { telemetryFor, type JobMetrics } from "./metrics.js";
import { parentChannel } from "./ipc-batch.js";

export interface LocalWorkerServerOptions {
  /** The engine, made once the intake has handed over the hidden-state key. */
  makeDeps(stateKey: StateKey): WorkflowDeps;
  ports: TokenPorts;
  concurrency: number;
  metrics: JobMetrics;
  log: Logger;
  /** The compiled job runner (lib/job-runner.js): lane work runs there. */
  runnerEntry: string;
}

/** The local worker once started: its jobs, and the job runner lane work goes to. */
interface Started {
  backend: LocalJobs;
  runner: JobRunner;
}

/**
 * The local worker `npm start` forks: takes jobs from its parent over IPC and runs them through
 * the job runtime over the memory store (`LocalJobs`: thread lanes, BLUEPRINT_CONCURRENCY), with each
 * job's own token. The intake claimed each delivery: the worker does not claim it again.
 */
export function serveLocalJobs(options: LocalWorkerServerOptions): void {
  let started: Started | null = null;
  // Checked on arrival by the intake (fromLocalWorkerSchema); typed here.
  const send: (message: FromLocalWorker) => void = parentChannel<ToLocalWorker, FromLocalWorker>({
    messages: toLocalWorkerSchema,
    log: options.log,
    name: "the local worker",
    start: (message) => (started = start(options, send, tokens, message.stateKey)),
    receive: (message) => started && handle(started.backend, message, tokens),
    answer: async (what) =>
      what === "stats"
        ? started?.backend.stats()
        : what === "idle"
          ? started?.backend.idle()
          : options.metrics.registry.getMetricsAsJSON(),
    // The intake's "shutdown", or the intake gone (crashed or killed): no one can hand us jobs or hear us.
    stop: async (reason, timeoutMs) => {
      await started?.backend.shutdown(reason, timeoutMs);
      started?.runner.stop();
    },
  });
  const tokens = LocalJobTokens.fromIntake(send, options.log);
}

/** The intake's jobs, removals and token answers, once the worker has started. */
function handle(
  backend: LocalJobs,
  message: Extract<ToLocalWorker, { type: "job" | "resume" | "remove" | "token" }>,
  tokens: LocalJobTokens,
): void {
  if (message.type === "remove") void backend.removeRepositories(message.removal);
  else if (message.type === "token") tokens.asker.answer(message);
  else {
    tokens.keep(message.job.deliveryId, message.token);
    if (message.type === "job") backend.take({ job: message.job, keys: message.keys });
    else backend.resume({ job: message.job, keys: message.keys });
  }
}

/** The job runtime on the hidden-state key the intake sent, with lane work in a job runner. */
function start(
  options: LocalWorkerServerOptions,
  send: (message: FromLocalWorker) => void,
  tokens: LocalJobTokens,
  stateKey: string,
): Started {
  const deps = options.makeDeps(stateKeyFrom(stateKey));
  const runner = new JobRunner({
    entry: options.runnerEntry,
    stateKey,
    log: options.log,
    telemetry: telemetryFor(options.metrics),
  });
  const backend = new LocalJobs({
    deps,
    concurrency: options.concurrency,
    metrics: options.metrics,
    onRelease: (keys) => send({ type: "release", keys }),
    onSettled: (job, phase) => send({ type: "settled", deliveryId: job.deliveryId, phase }),
    // Fresh from the intake when it waited long: lane work reads GitHub here first (a build's approval).
    portsFor: async (job) => options.ports.portsFor(job, await tokens.fresh(job)),
    workReady: () => runner.isReady,
    // With the job's token fresh, and renewed through the intake as it works.
    runWork: async (job, signal) => runner.run(job, await tokens.fresh(job), signal, () => tokens.fresh(job)),
    removeFiles: async (removal) => runner.removeRepositories(removal),
  });
  return { backend, runner };
}
