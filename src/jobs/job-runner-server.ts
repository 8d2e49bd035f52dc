import { createSecretKey } from "node:crypto";
import type { StateKey } from "../github/state-marker.js";
import { renewingToken } from "../credentials/index.js";
import type { TokenPorts } from "../github/token-port.js";
import type { Logger } from "../shared/logger.js";
import type { WorkflowDeps } from "../workflow/deps.js";
import { HandOver, handOverTaken } from "../shared/hand-over.js";
import { workerPorts, workJob } from "../workflow/run-job.js";
import { PermissionCache } from "./permission-cache.js";
import { parentChannel } from "./ipc-batch.js";
import { toJobRunnerSchema, type FromJobRunner, type ToJobRunner } from "./protocol.js";
import { TokenAsker } from "./token-relay.js";

/** How long a job waits for its worker to bring a fresh token before it works on with the one it has. */
const TOKEN_ANSWER_MS = 90_000;

export interface JobRunnerServerOptions {
  makeDeps(stateKey: StateKey): WorkflowDeps;
  ports: TokenPorts;
  log: Logger;
}

/** The job runner's side: lane work for the worker that forked it (local or Redis), each job with its own token. */
export function serveJobRunner(options: JobRunnerServerOptions): void {
  const outbox = parentChannel<ToJobRunner, FromJobRunner>({
    messages: toJobRunnerSchema,
    receive,
    log: options.log,
    name: "the job runner",
    // The worker gone: it stopped us after its jobs returned, or it died and its jobs go to a fresh worker
    // (the intake hands a local worker's on; a Redis worker's are taken over from the queue), which
    // resumes them from what was pushed. Either way, at once: two runners must never work one job.
    onParentGone: () => process.exit(0),
  });
  // Checked on arrival by the worker (fromJobRunnerSchema); typed here.
  const send = (message: FromJobRunner) => outbox.send(message);
  const running = new Map<number, AbortController>();
  /** Questions for a fresh token, awaiting the worker's answer. */
  const tokens = new TokenAsker(send, TOKEN_ANSWER_MS);
  const permissions = new PermissionCache();
  let deps: WorkflowDeps | null = null;

  function receive(message: ToJobRunner): void {
    if (message.type === "start") {
      // Model tokens and step durations go to the worker, whose metrics /metrics serves.
      deps ??= {
        ...options.makeDeps(createSecretKey(Buffer.from(message.stateKey, "base64"))),
        telemetry: {
          modelUsage: (kind, usage) => send({ type: "usage", kind, usage }),
          stepSeconds: (seconds) => send({ type: "step", seconds }),
        },
      };
      send({ type: "ready" });
      // Before its first job: trees an earlier runner left go, and the work directory's bound is checked.
      void deps.workdir?.start();
      return;
    }
    if (!deps) {
      options.log.error({ type: message.type }, "the job runner got a message before its start");
      return;
    }
    if (message.type === "abort") {
      running.get(message.id)?.abort(message.handOver ? new HandOver() : message.reason);
      return;
    }
    if (message.type === "token") {
      tokens.answer(message);
      return;
    }
    if (message.type === "remove") {
      void (deps.workdir?.remove(message.removal) ?? Promise.resolve(null)).then(
        (files) =>
          files &&
          options.log.info(
            { deliveryId: message.removal.deliveryId, ...files },
            "removed the files of repositories Blueprint no longer has access to",
          ),
        (error: unknown) =>
          options.log.error(
            { err: error, deliveryId: message.removal.deliveryId },
            "could not remove the files of repositories Blueprint no longer has access to",
          ),
      );
      return;
    }
    const { id, job } = message;
    const controller = new AbortController();
    // The worker holds no App key either: a fresh token comes from the intake through it.
    const token = renewingToken(message.token, () => tokens.ask(job.deliveryId), options.log, job);
    const ports = workerPorts(deps, options.ports.portsFor(job, token), permissions);
    running.set(id, controller);
    void workJob(deps, ports.work, job, controller.signal).finally(() => {
      running.delete(id);
      send({ type: "done", id, handedOver: handOverTaken(controller.signal) });
    });
  }
}
