import type { z } from "zod";
import type { Logger } from "../shared/logger.js";
import { SHUTDOWN_REASON } from "./backend.js";

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
 * The words every child shares (protocol.ts), heard once for all: its parent's "start" sets the child up (once;
 * "ready" goes back when it has), questions ("ask") are answered, and "shutdown" or the parent gone stops it. Until
 * its start, anything else is logged and dropped.
 */
/** What a child may be asked ("ask"'s `what`). */
type Question<In> = In extends { type: "ask"; what: infer What } ? What : never;

export interface ChildServer<In extends { type: string }> {
  messages: z.ZodType<In>;
  /** What the child is, for the log ("the local worker"). */
  name: string;
  log: Logger;
  start(message: Extract<In, { type: "start" }>): unknown;
  /** Every other message, once started. */
  receive(message: Exclude<In, { type: "start" | "ask" | "shutdown" }>): void;
  /** The answer to an "ask" (sent as null when there is none). */
  answer?(what: Question<In>): Promise<unknown>;
  /**
   * On "shutdown", or once the parent is gone (with `SHUTDOWN_REASON` and 20 s): the work stops at its next safe
   * point, then this process exits. Without it, a child whose parent is gone exits at once.
   */
  stop?(reason: string, timeoutMs: number): Promise<void>;
}

/** How long running work has to reach a safe point when the parent is gone without a "shutdown". */
const ORPHAN_STOP_MS = 20_000;

/**
 * A forked child's side of its IPC channel to the parent: each message (batches undone, in order)
 * checked against the child's protocol (protocol.ts) on arrival, then served as `ChildServer` says; what it sends
 * is batched as above. Once the parent is gone (it exited, or is being replaced) there is nobody to tell:
 * sending then would crash this process on its way down, so `stop` decides what becomes of its work. Signals to the
 * process group (Ctrl-C, SIGTERM) are the parent's to act on: it tells the child, so running jobs stop at a safe
 * point instead of dying mid-step. Returns how the child sends to its parent.
 */
export function parentChannel<In extends { type: string }, Out>(server: ChildServer<In>): (message: Out) => void {
  const outbox = new IpcBatcher<Out | { type: "ready" } | { type: "answer"; id: number; value: unknown }>((batch) =>
    process.connected ? process.send?.(batch, undefined, undefined, () => undefined) : undefined,
  );
  let starting: Promise<unknown> | null = null;
  let stopping: Promise<void> | null = null;
  const stop = (reason: string, timeoutMs: number) =>
    (stopping ??= (server.stop?.(reason, timeoutMs) ?? Promise.resolve()).finally(() => {
      outbox.flush();
      process.exit(0);
    }));
  const serve = (message: In) => {
    if (message.type === "start") {
      // Set up now: what came in the same batch after the start is for the child it makes.
      starting ??= Promise.resolve(server.start(message as Extract<In, { type: "start" }>));
      void starting.then(
        () => outbox.send({ type: "ready" }),
        () => undefined,
      );
    } else if (message.type === "shutdown") {
      const { reason, timeoutMs } = message as unknown as { reason: string; timeoutMs: number };
      void stop(reason, timeoutMs);
    } else if (!starting) server.log.error({ type: message.type }, `${server.name} got a message before its start`);
    else if (message.type === "ask" && server.answer) {
      const { id, what } = message as unknown as { id: number; what: Question<In> };
      void server.answer(what).then((value) => outbox.send({ type: "answer", id, value: value ?? null }));
    } else server.receive(message as Exclude<In, { type: "start" | "ask" | "shutdown" }>);
  };
  process.on("message", (raw: unknown) =>
    unbatch(raw).forEach((one) => {
      const parsed = server.messages.safeParse(one);
      if (parsed.success) serve(parsed.data);
      else server.log.error({ issues: parsed.error.issues }, `${server.name} got a message that is not one`);
    }),
  );
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => undefined);
  process.on("disconnect", () => (server.stop ? void stop(SHUTDOWN_REASON, ORPHAN_STOP_MS) : process.exit(0)));
  return (message) => outbox.send(message);
}
