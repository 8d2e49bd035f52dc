import type { Job, Removal } from "../job.js";

/** Where lane work stands once queued on its thread: what triage's "Queued" notice says. */
export interface Enqueued {
  /** Jobs ahead of it on its thread (the running one included). */
  ahead: number;
  /** The label of the thread's running job. */
  running: string | null;
  /** Every slot busy: it waits for one. */
  full: boolean;
}

/** What lane work takes along from triage: its claim keys, and (Redis) its token sealed for it. */
export interface Carried {
  keys: string[];
  sealedToken?: string | undefined;
}

/**
 * What the job runtime keeps beyond one job, and shares with every process that works jobs: the
 * deliveries claimed, each installation's commands not yet triaged, each thread's lane (one job at a
 * time, the others waiting in order), `/cancel`, and removals. Two of them: `memory.ts` (one process:
 * the local worker, the Action and the CLI) and `redis.ts` (every intake and queue worker on a Redis).
 * The runtime (`../runtime.ts`) goes triage → lane → work over either.
 */
export interface JobStore {
  /**
   * Whether jobs reach this store through something others may write (Redis): a job put back there after it was
   * answered must not be answered again, so a quick answer is given once per comment (`triageJob`'s `answerOnce`).
   */
  readonly shared: boolean;
  /**
   * Claims a delivery's keys (delivery, comment or review id): null when one was claimed before (a
   * redelivery, which must start nothing); else the command's turn among its installation's commands
   * not yet triaged (1: the only one).
   */
  claim(keys: readonly string[], job: Pick<Job, "deliveryId" | "installationId">): Promise<{ turn: number } | null>;
  /** Forgets a claim whose handling failed before its 👀, so that GitHub's redelivery is handled. */
  release(keys: readonly string[]): Promise<void>;
  /** A claimed command was triaged (or never will be): its installation's next one may take an earlier turn. */
  triaged(installationId: number): Promise<void>;
  /** Queues lane work on its thread, behind what runs or waits there. */
  enqueueWork(job: Job, carried: Carried): Promise<Enqueued>;
  /** `/cancel`: drops the thread's waiting jobs and stops its running one (at its next safe point). */
  cancel(thread: string): Promise<{ running: string | null; dropped: number }>;
  /** The label of the thread's running job, if any. */
  runningLabel(thread: string): Promise<string | null>;
  /**
   * Records a removal (an uninstall): jobs of its repositories received before it are dropped when their turn comes.
   */
  recordRemoval(removal: Removal): Promise<void>;
  /** Whether a removal recorded since the job was received covers it. */
  removed(job: Job): Promise<boolean>;
}
