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
 * A forked child's side of its IPC channel to the parent: `receive` hears each message (batches
 * undone, in order); `send` batches as above. Once the parent is gone (it exited, or is being
 * replaced) there is nobody to tell: sending then would crash this process on its way down.
 */
export function parentChannel<Out>(receive: (raw: unknown) => void): IpcBatcher<Out> {
  process.on("message", (raw: unknown) => unbatch(raw).forEach(receive));
  return new IpcBatcher<Out>((batch) => (process.connected ? process.send?.(batch) : undefined));
}
