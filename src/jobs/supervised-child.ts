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
  /**
   * A child stopped unexpectedly; a fresh one replaces it after `restartInMs` (0 unless children keep
   * stopping before they are ready). `wasReady`: whether it had said ready. Only then was it sent
   * anything but its hello (callers wait for `ready`), so only then is there work to take over;
   * what waits for `ready` goes to the replacement by itself.
   */
  onRestart(stopped: { code: number | null; signal: NodeJS.Signals | null; restartInMs: number; wasReady: boolean }): void;
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
  /** Settled when a child says it is ready; a fresh one only once a ready child has stopped. */
  private readyNow = deferred();
  private started = false;
  private supervising = true;
  /** Children in a row that stopped before saying they were ready: the next waits longer (see `restartDelay`). */
  private failedStarts = 0;
  private restartTimer: NodeJS.Timeout | null = null;

  constructor(private readonly options: SupervisedChildOptions<In, Out>) {
    this.start();
  }

  /**
   * Resolves when a child has said it is ready: the current one, or, if it stops before that, the
   * one that replaces it (waiters are never left with a child that is gone).
   */
  get ready(): Promise<void> {
    return this.readyNow.promise;
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
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
  }

  /**
   * A deliberate shutdown: the child is no longer replaced, is sent `farewell` (it stops its work and
   * exits), and is killed if it has not exited within `timeoutMs`.
   */
  async stop(farewell: In, timeoutMs: number): Promise<void> {
    this.stopSupervising();
    const child = this.current;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    this.send(farewell);
    const gone = await Promise.race([exited.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs).unref())]);
    if (!gone) child.kill("SIGKILL");
  }

  private start(): void {
    this.restartTimer = null;
    const child = fork(this.options.entry, [], { env: this.options.env, stdio: "inherit" });
    this.current = child;
    // A child replaced before its outbox left gets nothing more: the fresh one starts from its hello.
    this.outbox = new IpcBatcher<In>((batch) => (child.connected ? child.send(batch as Serializable) : undefined));
    this.started = false;
    this.options.forked?.(child);
    this.send(this.options.hello);
    child.on("message", (raw: unknown) => {
      for (const one of unbatch(raw)) {
        const parsed = this.options.messages.safeParse(one);
        if (!parsed.success) continue;
        if (parsed.data.type === "ready") {
          if (this.current !== child) continue;
          this.started = true;
          this.failedStarts = 0;
          this.readyNow.resolve();
        } else this.options.onMessage(parsed.data as Exclude<Out, { type: "ready" }>);
      }
    });
    child.once("exit", (code, signal) => {
      if (!this.supervising) return;
      const wasReady = this.started;
      if (wasReady) this.readyNow = deferred();
      else this.failedStarts++;
      const delay = restartDelay(this.failedStarts);
      if (delay === 0) this.start();
      else this.restartTimer = setTimeout(() => this.start(), delay);
      this.options.onRestart({ code, signal, restartInMs: delay, wasReady });
    });
  }
}

/** A child that stopped before it was ready is forked again after 0.25 s, then 0.5 s, 1 s, … up to 30 s; one that had run, at once. */
export function restartDelay(failedStarts: number): number {
  return failedStarts === 0 ? 0 : Math.min(30_000, 250 * 2 ** (failedStarts - 1));
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((settle) => (resolve = settle));
  return { promise, resolve };
}

/**
 * Questions to a child (or a parent) awaiting their answers by id: each answered once, or with null
 * when none can come (the child was replaced, or the question's time ran out). A question may name
 * what it is `about`: then only an answer naming the same is taken (ids alone start again from 0 in a
 * fresh process, so an answer meant for a predecessor's question could carry the same id).
 */
export class PendingAnswers<T = unknown> {
  private readonly waiting = new Map<number, { resolve: (value: T | null) => void; about: string | undefined }>();
  private nextId = 0;

  /** A fresh question: its id (to send) and its answer. */
  ask(timeoutMs?: number, about?: string): { id: number; answer: Promise<T | null> } {
    const id = this.nextId++;
    const answer = new Promise<T | null>((resolve) => this.waiting.set(id, { resolve, about }));
    if (timeoutMs !== undefined) setTimeout(() => this.settle(id, null), timeoutMs).unref();
    return { id, answer };
  }

  /** Answers question `id`, unless it was asked `about` something other than `about`. */
  answer(id: number, value: T | null, about?: string): void {
    const waiting = this.waiting.get(id);
    if (waiting?.about !== undefined && waiting.about !== about) return;
    this.settle(id, value);
  }

  /** The child that was asked is gone: every open question gets null. */
  dropAll(): void {
    for (const { resolve } of this.waiting.values()) resolve(null);
    this.waiting.clear();
  }

  private settle(id: number, value: T | null): void {
    this.waiting.get(id)?.resolve(value);
    this.waiting.delete(id);
  }
}

/** How much lower a forked worker's CPU priority is than the intake's (nice): webhooks win the CPU. */
export const WORKER_NICENESS = 3;

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
