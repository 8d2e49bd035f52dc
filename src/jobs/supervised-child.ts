import { fork, type ChildProcess, type Serializable } from "node:child_process";
import os from "node:os";
import type { z } from "zod";
import type { Logger } from "../workflow/deps.js";
import { IpcBatcher, unbatch } from "./ipc-batch.js";

export interface SupervisedChildOptions<In, Out extends { type: string }> {
  /** The compiled entry to fork. */
  entry: string;
  env: NodeJS.ProcessEnv;
  /** The child's messages, checked on arrival; anything else is dropped. */
  messages: z.ZodType<Out>;
  /** The first message every fresh child gets; it answers `{ type: "ready" }`. */
  hello: In;
  onMessage(message: Exclude<Out, { type: "ready" }>): void;
  /** A fresh child has replaced one that stopped unexpectedly (its `ready` is the fresh one's). */
  onRestart(stopped: { code: number | null; signal: NodeJS.Signals | null }): void;
  /** Each forked child, before anything is sent to it (e.g. to lower its CPU priority). */
  forked?(child: ChildProcess): void;
}

/**
 * A forked child process on an IPC channel, forked again whenever it stops unexpectedly: the local
 * worker under the intake, a job runner under its worker. Messages are plain data, checked
 * by whoever receives them.
 */
export class SupervisedChild<In, Out extends { type: string }> {
  private current: ChildProcess | null = null;
  /** The current child's outgoing messages, a turn's worth at a time. */
  private outbox: IpcBatcher<In> | null = null;
  private readyNow: Promise<void> = Promise.resolve();
  private started = false;
  private supervising = true;

  constructor(private readonly options: SupervisedChildOptions<In, Out>) {
    this.start();
  }

  /** Resolves when the current child has said it is ready. */
  get ready(): Promise<void> {
    return this.readyNow;
  }

  /** Whether the current child has said it is ready. */
  get isReady(): boolean {
    return this.started;
  }

  get process(): ChildProcess | null {
    return this.current;
  }

  send(message: In): void {
    this.outbox?.send(message);
  }

  /** From now on a child that stops is not replaced (a deliberate shutdown). */
  stopSupervising(): void {
    this.supervising = false;
  }

  private start(): void {
    const child = fork(this.options.entry, [], { env: this.options.env, stdio: "inherit" });
    this.current = child;
    // A child replaced before its outbox left gets nothing more: the fresh one starts from its hello.
    this.outbox = new IpcBatcher<In>((batch) => (child.connected ? child.send(batch as Serializable) : undefined));
    this.started = false;
    this.options.forked?.(child);
    this.send(this.options.hello);
    this.readyNow = new Promise<void>((resolve) => {
      child.on("message", (raw: unknown) => {
        for (const one of unbatch(raw)) {
          const parsed = this.options.messages.safeParse(one);
          if (!parsed.success) continue;
          if (parsed.data.type === "ready") {
            if (this.current === child) this.started = true;
            resolve();
          } else this.options.onMessage(parsed.data as Exclude<Out, { type: "ready" }>);
        }
      });
    });
    child.once("exit", (code, signal) => {
      if (!this.supervising) return;
      this.start();
      this.options.onRestart({ code, signal });
    });
  }
}

/**
 * Lowers a freshly forked child's CPU priority below ours by `niceness` (it inherits ours; the
 * threads it starts later inherit its own), so that under load our event loop wins the CPU.
 */
export function lowerPriority(child: ChildProcess, niceness: number, log: Logger, what: string): void {
  if (!child.pid || niceness <= 0) return;
  try {
    os.setPriority(child.pid, Math.min(19, os.getPriority() + niceness));
  } catch (error) {
    log.warn({ err: error }, `could not lower ${what}'s CPU priority; it competes with this process for the CPU under load`);
  }
}
