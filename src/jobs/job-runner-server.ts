import type { StateKey } from "../github/state-marker.js";
import { renewingToken } from "../credentials/index.js";
import type { TokenPorts } from "../github/token-port.js";
import type { Logger } from "../shared/logger.js";
import type { WorkflowDeps } from "../workflow/deps.js";
import { HandOver, handOverTaken } from "../shared/hand-over.js";
import { workerPorts, workJob } from "../workflow/run-job.js";
import { PermissionCache } from "./permission-cache.js";
import { parentChannel } from "./ipc-batch.js";
import { stateKeyFrom, toJobRunnerSchema, type FromJobRunner, type ToJobRunner } from "./protocol.js";
import { removeRepositoryFiles } from "./runtime.js";
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
  const running = new Map<number, AbortController>();
  const permissions = new PermissionCache();
  let deps: WorkflowDeps | null = null;
  // Checked on arrival by the worker (fromJobRunnerSchema); typed here. Without `stop`: the worker gone, it stopped
  // us after its jobs returned, or it died and its jobs go to a fresh worker (the intake hands a local worker's on; a
  // Redis worker's are taken over from the queue), which resumes them from what was pushed. Either way, at once: two
  // runners must never work one job.
  const send: (message: FromJobRunner) => void = parentChannel<ToJobRunner, FromJobRunner>({
    messages: toJobRunnerSchema,
    log: options.log,
    name: "the job runner",
    start: (message) => {
      // Model tokens and step durations go to the worker, whose metrics /metrics serves.
      deps = {
        ...options.makeDeps(stateKeyFrom(message.stateKey)),
        telemetry: {
          modelUsage: (kind, usage) => send({ type: "usage", kind, usage }),
          stepSeconds: (seconds) => send({ type: "step", seconds }),
        },
      };
      // Before its first job: trees an earlier runner left go, and the work directory's bound is checked.
      void deps.workdir?.start();
    },
    receive: (message) => {
      if (!deps) return;
      if (message.type === "abort") running.get(message.id)?.abort(message.handOver ? new HandOver() : message.reason);
      else if (message.type === "token") tokens.answer(message);
      else if (message.type === "remove") void removeRepositoryFiles(deps, message.removal);
      else run(deps, message);
    },
  });
  /** Questions for a fresh token, awaiting the worker's answer. */
  const tokens = new TokenAsker(send, TOKEN_ANSWER_MS);

  function run(engine: WorkflowDeps, { id, job, token: held }: Extract<ToJobRunner, { type: "run" }>): void {
    const controller = new AbortController();
    // The worker holds no App key either: a fresh token comes from the intake through it.
    const token = renewingToken(held, () => tokens.ask(job.deliveryId), options.log, job);
    const ports = workerPorts(engine, options.ports.portsFor(job, token), permissions);
    running.set(id, controller);
    void workJob(engine, ports.work, job, controller.signal).finally(() => {
      running.delete(id);
      send({ type: "done", id, handedOver: handOverTaken(controller.signal) });
    });
  }
}
