import { createSecretKey } from "node:crypto";
import { expiresSoon, type JobToken } from "../github/job-token.js";
import { reportFailedJob } from "../workflow/run-job.js";
import type { StateKey } from "../github/state-marker.js";
import type { TokenPorts } from "../github/token-port.js";
import type { Logger, WorkflowDeps } from "../workflow/deps.js";
import { SHUTDOWN_REASON } from "./backend.js";
import { EmbeddedBackend } from "./embedded.js";
import type { Job } from "./job.js";
import { JobRunner } from "./job-runner.js";
import { toWorkerSchema, type FromWorker } from "./local-protocol.js";
import { telemetryFor, type JobMetrics } from "./metrics.js";
import { trimOldest } from "./bounded-map.js";
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

/**
 * The local worker `npm start` forks: takes jobs from its parent over IPC and runs them through
 * the embedded backend (thread lanes, BLUEPRINT_CONCURRENCY), with each job's own token.
 */
export function serveLocalJobs(options: LocalWorkerServerOptions): void {
  // Checked on arrival by the intake (fromWorkerSchema); typed here.
  const outbox = parentChannel<FromWorker>(receive);
  const send = (message: FromWorker) => outbox.send(message);
  const tokens = new Map<string, JobToken>();
  let backend: EmbeddedBackend | null = null;
  let runner: JobRunner | null = null;
  const tokenFor = (job: Job) => {
    const token = tokens.get(job.deliveryId);
    if (!token) throw new Error(`no token for delivery ${job.deliveryId}`);
    return token;
  };
  // A job that waited long on its thread (behind a long build, say) gets a fresh token from the intake first,
  // and so does one whose token runs low while it works (its job runner asks).
  const tokenAnswers = new Map<number, { deliveryId: string; answer: (token: JobToken | null) => void }>();
  let nextTokenRequest = 0;
  const freshTokenFor = async (job: Job): Promise<JobToken> => {
    const token = tokenFor(job);
    if (!expiresSoon(token)) return token;
    const id = nextTokenRequest++;
    const fresh = await new Promise<JobToken | null>((resolve) => {
      tokenAnswers.set(id, { deliveryId: job.deliveryId, answer: resolve });
      send({ type: "token-request", id, job });
      setTimeout(() => resolve(null), 60_000).unref();
    });
    tokenAnswers.delete(id);
    if (!fresh) {
      options.log.warn({ deliveryId: job.deliveryId, expiresAt: token.expiresAt }, "no fresh token for a job that waited long; it works with the one it has");
      return token;
    }
    options.log.info({ deliveryId: job.deliveryId }, "the job's token was about to expire: the intake sent a fresh one");
    tokens.set(job.deliveryId, fresh);
    return fresh;
  };
  const start = (stateKey: StateKey, stateKeyText: string) => {
    const deps = options.makeDeps(stateKey);
    const jobRunner = options.runnerEntry ? new JobRunner({ entry: options.runnerEntry, stateKey: stateKeyText, log: options.log, telemetry: telemetryFor(options.metrics) }) : null;
    runner = jobRunner;
    return new EmbeddedBackend({
      deps,
      concurrency: options.concurrency,
      metrics: options.metrics,
      onRelease: (keys) => send({ type: "release", keys }),
      onSettled: (job, phase) => send({ type: "settled", deliveryId: job.deliveryId, phase }),
      portsFor: async (job) => options.ports.portsFor(job, tokenFor(job)),
      ...(jobRunner
        ? {
            workReady: () => jobRunner.isReady,
            runWork: (job: Job, signal: AbortSignal) =>
              // The use case could not report this itself: its process died under it, more than once.
              freshTokenFor(job)
                .then((token) => jobRunner.run(job, token, signal, () => freshTokenFor(job)))
                .catch(async (error: unknown) => {
                  // With the token as renewed (or renewed now): the job may have outlived the one it started with.
                  const token = await freshTokenFor(job).catch(() => tokenFor(job));
                  await reportFailedJob(options.log, options.ports.portsFor(job, token).work, job, error);
                  return "failed" as const;
                }),
          }
        : {}),
    });
  };

  function receive(raw: unknown): void {
    const parsed = toWorkerSchema.safeParse(raw);
    if (!parsed.success) {
      options.log.error({ issues: parsed.error.issues }, "the local worker got a message that is not one");
      return;
    }
    const message = parsed.data;
    if (message.type === "start") {
      backend ??= start(createSecretKey(Buffer.from(message.stateKey, "base64")), message.stateKey);
      send({ type: "ready" });
      return;
    }
    if (!backend) {
      options.log.error({ type: message.type }, "the local worker got a message before its start");
      return;
    }
    const running = backend;
    switch (message.type) {
      case "job":
      case "resume":
        tokens.set(message.job.deliveryId, message.token);
        trimOldest(tokens, 20_000);
        if (message.type === "job") void running.submit({ job: message.job, keys: message.keys });
        else running.resume({ job: message.job, keys: message.keys });
        return;
      case "ask": {
        const answer = message.what === "stats" ? running.stats() : message.what === "idle" ? running.idle() : options.metrics.registry.getMetricsAsJSON();
        void answer.then((value) => send({ type: "answer", id: message.id, value: value ?? null }));
        return;
      }
      case "token": {
        const waiting = tokenAnswers.get(message.id);
        if (waiting?.deliveryId === message.deliveryId) waiting.answer(message.token);
        return;
      }
      case "shutdown":
        void running.shutdown(message.reason, message.timeoutMs).finally(() => {
          runner?.stop();
          outbox.flush();
          process.exit(0);
        });
        return;
    }
  }
  // Ctrl-C or a SIGTERM to the process group reaches us too: the intake decides when we stop (its
  // "shutdown" message), so running jobs stop at a safe point instead of dying mid-step.
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => undefined);
  // The parent gone (crashed or killed) means no one can hand us jobs or hear us: stop.
  process.on("disconnect", () => void (backend?.shutdown(SHUTDOWN_REASON, 20_000) ?? Promise.resolve()).finally(() => process.exit(0)));
}
