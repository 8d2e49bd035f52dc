import type { z } from "zod";
import type { Logger } from "../shared/logger.js";

/**
 * IPC messages sent in one turn of the event loop leave together, as one message holding them in
 * order (an array; a lone message goes as itself). In a burst the intake hands the local worker
 * hundreds of jobs and hears back twice per job: one write and one wake-up per turn instead of per
 * message leaves the intake's loop for webhooks.
 */
export class IpcBatcher<Message> {
  private queue: Message[] = [];
  private scheduled = false;

  constructor(private readonly write: (batch: Message | Message[]) => void) {}

  send(message: Message): void {
    this.queue.push(message);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Writes what is queued now (before the process exits, say). */
  flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length > 0) this.write(batch.length === 1 ? batch[0]! : batch);
  }
}

/** The messages one IPC message carried: a batch's, in order, or itself. */
export function unbatch(raw: unknown): unknown[] {
  return Array.isArray(raw) ? raw : [raw];
}

/**
 * A forked child's side of its IPC channel to the parent: each message (batches undone, in order)
 * checked against the child's protocol (protocol.ts) on arrival, then to `receive`; what it sends is
 * batched as above. Once the parent is gone (it exited, or is being replaced) there is nobody to tell:
 * sending then would crash this process on its way down, so `onParentGone` decides what becomes of
 * its work. Signals to the process group (Ctrl-C, SIGTERM) are the parent's to act on: it tells the
 * child, so running jobs stop at a safe point instead of dying mid-step.
 */
export function parentChannel<In, Out>(options: {
  messages: z.ZodType<In>;
  receive(message: In): void;
  onParentGone(): void;
  log: Logger;
  name: string;
}): IpcBatcher<Out> {
  process.on("message", (raw: unknown) =>
    unbatch(raw).forEach((one) => {
      const parsed = options.messages.safeParse(one);
      if (parsed.success) options.receive(parsed.data);
      else options.log.error({ issues: parsed.error.issues }, `${options.name} got a message that is not one`);
    }),
  );
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => undefined);
  process.on("disconnect", options.onParentGone);
  return new IpcBatcher<Out>((batch) =>
    process.connected ? process.send?.(batch, undefined, undefined, () => undefined) : undefined,
  );
}
