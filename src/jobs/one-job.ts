import { readRunOutcome, recordErrors, recordWrites, type RunOutcome } from "../github/run-outcome.js";
import type { WorkflowDeps } from "../workflow/deps.js";
import type { ThreadPort } from "../workflow/ports.js";
import { PermissionUnknown } from "../workflow/run-job.js";
import type { Job } from "./job.js";
import { JobRuntime } from "./runtime.js";
import { MemoryStore } from "./store/memory.js";

/**
 * The Action and the CLI act with a token of their own (the workflow's, or none at all), not an App
 * installation's. Their jobs name an installation as every job does; nothing reads this one: their
 * ports are made from their own token, and their jobs never leave the process.
 */
export const OWN_TOKEN_INSTALLATION_ID = 1;

export interface OneJobResult {
  /** Where the thread stands after the job, and whether this run put it there. */
  outcome: RunOutcome;
  /** Errors the engine logged during the job. */
  jobErrors: string[];
}

/**
 * One job in this process, triaged and worked by the App's job runtime over a memory store: how the
 * Action (one event per workflow run) and the CLI (one command per call) run what the App runs. `job`
 * null: the event was not for Blueprint; only the thread's standing is read. `onInterrupt` is handed
 * a way to stop the job at its next safe point.
 */
export async function runOneJob(
  engine: WorkflowDeps,
  thread: ThreadPort,
  job: Job | null,
  onInterrupt?: (stop: (reason: string) => void) => void,
): Promise<OneJobResult> {
  // 1. Record what this run writes and logs, so the outcome is about this run.
  const { port, writes } = recordWrites(thread);
  const logged = recordErrors(engine.log);
  const deps: WorkflowDeps = { ...engine, log: logged.log };

  // 2. Triage, then the job's lane: nothing else runs on the thread here, so it starts at once.
  if (job) {
    // One token, one process: the acknowledgement and the work share a budget.
    const ports = { ack: port, reply: port, work: port };
    const store: MemoryStore = new MemoryStore({
      concurrency: 1,
      work: async (queued, _carried, controller) =>
        void (await runtime.work(queued.deliveryId, queued, controller, { ports: async () => ports })),
    });
    const runtime = new JobRuntime(store, null, deps);
    onInterrupt?.((reason) => store.stopAll(reason));
    const { error } = await runtime.triage(job, { keys: [] }, ports);
    // No redelivery will come to a single run: GitHub's own answer is the error to report.
    if (error) throw error instanceof PermissionUnknown ? error.reason : error;
    await store.idle();
  }

  // 3. Where the thread stands now, and whether this run put it there.
  return { outcome: await readRunOutcome(port, writes, deps.stateKey), jobErrors: logged.errors };
}
