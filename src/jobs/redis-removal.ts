import type { Queue } from "bullmq";
import { removalCovers, REMOVED_REASON, type Removal } from "./job.js";
import { verifiedRemoval, wireSchema } from "./job-wire.js";
import type { RedisWorkerContext } from "./redis-worker-context.js";
import type { Sealer } from "../credentials/index.js";

export interface RemovalHearing {
  deps: Pick<RedisWorkerContext["deps"], "log" | "workdir">;
  sealer: Sealer;
  workQueue: Queue;
  /** The lane work running in this worker, by BullMQ id. */
  controllers: Map<string, AbortController>;
  /** Where the files go when lane work runs in a job runner; without it, this process's work directory keeper. */
  removeFiles?: ((removal: Removal) => void) | undefined;
}

/**
 * A removal an intake published (redis-lanes.ts `remove`), heard by this worker: its running jobs of
 * those repositories stop at their next safe point, and their files go from this worker's work
 * directory (a running job's once it ends). A message no intake signed is ignored, logged.
 */
export async function hearRemoval(hearing: RemovalHearing, message: string): Promise<void> {
  const { deps } = hearing;
  const removal = verifiedRemoval(hearing.sealer, message);
  if (!removal) {
    deps.log.error({}, "ignored a removal in Redis that no intake signed");
    return;
  }
  for (const [workId, controller] of hearing.controllers) {
    const wire = wireSchema.safeParse((await hearing.workQueue.getJob(workId).catch(() => undefined))?.data);
    if (wire.success && removalCovers(removal, wire.data.job)) controller.abort(REMOVED_REASON);
  }
  if (hearing.removeFiles) hearing.removeFiles(removal);
  else await deps.workdir?.remove(removal).catch((error: unknown) => deps.log.error({ err: error, deliveryId: removal.deliveryId }, "could not remove the files of repositories Blueprint no longer has access to"));
}
