import { fork, type ChildProcess, type Serializable } from "node:child_process";
import os from "node:os";
import { writeFileSync } from "node:fs";
import type { z } from "zod";
import type { Logger } from "../shared/logger.js";
import { trimOldest } from "../shared/bounded-map.js";
import { IpcBatcher, unbatch } from "./ipc-batch.js";
import { PendingAnswers } from "./pending-answers.js";
import type { ChildAnswer } from "./protocol.js";

/** How a child stopped, as its supervisor saw it. */
export interface Stopped {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** A fresh child replaces it after this long (0 unless children keep stopping before they are ready). */
  restartInMs: number;
  /**
   * Whether it had said ready: only then was it sent anything but its hello, so only then is there work to take over.
   */
  wasReady: boolean;
}

/**
 * Work handed to a child that a fresh child takes over if it dies (jobs, runs). Tracked from when it
 * is sent until the child says it is done with it (`track`, `settle`).
 */
export interface TrackedWork<Work> {
  /** Work that outlives this many children is dropped instead of handed to another. */
  maxCrashes: number;
  /** At most this many are tracked (the oldest dropped first, silently): work long gone does not pile up. */
  limit?: number;
  /** Once a fresh child is ready: what the dead one held and is not dropped, in the order it was tracked. */
  onHandOver(work: Work[]): void;
  /** Work whose children kept dying: no longer tracked, and not handed over. */
  onDrop(work: Work, crashes: number, stopped: Stopped): void;
}

export interface SupervisedChildOptions<In, Out extends { type: string }, Work> {
  /** The compiled entry to fork. */
  entry: string;
  env: NodeJS.ProcessEnv;
  /** What the child is, for the log ("the local worker"). */
  name: string;
  log: Logger;
  /** The child's messages (protocol.ts), checked on arrival; anything else is dropped. */
  messages: z.ZodType<Out>;
  /** The first message every fresh child gets; it answers `{ type: "ready" }`. */
  hello: In;
  /** Every message but "ready" and the answers to `ask`, which the supervisor hears itself. */
  onMessage(message: Exclude<Out, { type: "ready" } | ChildAnswer>): void;
  /** How much lower than ours each child's CPU priority is (nice); none by default. */
  niceness?: number;
  /**
   * Each child in a session of its own, its `niceness` counted against every process on the machine
   * (see `lowerPriority`). Only for a child that exits the moment its parent is gone: a signal to our
   * process group no longer reaches it.
   */
  ownSession?: boolean;
  /** How the log goes on after "<name> stopped; starting another": what becomes of its work. */
  afterStop?: string;
  /** Hears each unexpected stop (after the supervisor has logged it and taken the work over). */
  onRestart?(stopped: Stopped): void;
  /** The work a dead child held, handed to its replacement; none tracked without it. */
  work?: TrackedWork<Work>;
}

/**
 * A forked child process on an IPC channel, forked again whenever it stops unexpectedly: the local
 * worker and the Redis queue worker under the intake, a job runner under its worker. The one
 * supervisor of every kind of child: it restarts a child, answers questions asked of it (`ask`), and
 * hands the work a dead child held to the fresh one, dropping work whose children keep dying.
 */
export class SupervisedChild<In, Out extends { type: string }, Work = never> {
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
  private readonly answers = new PendingAnswers();
  /** Work sent and not done, in the order it was tracked, with how many children died holding it. */
  private readonly held = new Map<string | number, { work: Work; crashes: number }>();

  constructor(private readonly options: SupervisedChildOptions<In, Out, Work>) {
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

  /** How much work the child holds. */
  get heldCount(): number {
    return this.held.size;
  }

  send(message: In): void {
    this.outbox?.send(message);
  }

  /**
   * Asks the ready child `question(id)`: its answer, or null when none can come (the child died, or
   * `timeoutMs` passed). Asked now, sent once a child is ready.
   */
  ask(question: (id: number) => In, timeoutMs?: number): Promise<unknown> {
    const { id, answer } = this.answers.ask(timeoutMs);
    void this.ready.then(() => this.send(question(id)));
    return answer;
  }

  /** `work` (sent to the child under `key`) is taken over by a fresh child if this one dies before `settle(key)`. */
  track(key: string | number, work: Work): void {
    this.held.set(key, { work, crashes: 0 });
    if (this.options.work?.limit !== undefined) trimOldest(this.held, this.options.work.limit);
  }

  /** The work tracked under `key` (to update, as a renewed token), if it still is. */
  tracked(key: string | number): Work | undefined {
    return this.held.get(key)?.work;
  }

  /** The first work tracked that `matches`, if any. */
  trackedWhere(matches: (work: Work) => boolean): Work | undefined {
    for (const { work } of this.held.values()) if (matches(work)) return work;
    return undefined;
  }

  /** The child is done with the work under `key`. */
  settle(key: string | number): void {
    this.held.delete(key);
  }

  /** No longer tracks any work that `matches` (a removed repository's jobs): a fresh child is not handed it. */
  settleWhere(matches: (work: Work) => boolean): void {
    for (const [key, { work }] of this.held) if (matches(work)) this.held.delete(key);
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
    const gone = await Promise.race([
      exited.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs).unref()),
    ]);
    if (!gone) child.kill("SIGKILL");
  }

  private start(): void {
    this.restartTimer = null;
    const child = fork(this.options.entry, [], {
      env: this.options.env,
      stdio: "inherit",
      detached: this.options.ownSession === true,
    });
    this.current = child;
    // A child replaced before its outbox left gets nothing more: the fresh one starts from its hello.
    // A child that dies as a batch leaves (EPIPE) loses it: its exit hands its tracked work over, so the
    // failed write is only logged (without the callback Node would throw it in this process).
    this.outbox = new IpcBatcher<In>((batch) =>
      child.connected
        ? child.send(
            batch as Serializable,
            (error) =>
              error &&
              this.options.log.warn({ err: error }, `a message to ${this.options.name} was lost: it was stopping`),
          )
        : undefined,
    );
    child.on("error", (error) =>
      this.options.log.warn({ err: error }, `${this.options.name}: its process reported an error`),
    );
    this.started = false;
    lowerPriority(
      child,
      this.options.niceness ?? 0,
      this.options.log,
      this.options.name,
      this.options.ownSession === true,
    );
    this.send(this.options.hello);
    child.on("message", (raw: unknown) => unbatch(raw).forEach((one) => this.receive(child, one)));
    child.once("exit", (code, signal) => {
      if (!this.supervising) return;
      const wasReady = this.started;
      if (wasReady) this.readyNow = deferred();
      else this.failedStarts++;
      const delay = restartDelay(this.failedStarts);
      if (delay === 0) this.start();
      else this.restartTimer = setTimeout(() => this.start(), delay);
      this.restarted({ code, signal, restartInMs: delay, wasReady });
    });
  }

  private receive(child: ChildProcess, raw: unknown): void {
    const parsed = this.options.messages.safeParse(raw);
    if (!parsed.success) return;
    const message = parsed.data;
    if (message.type === "ready") {
      if (this.current !== child) return;
      this.started = true;
      this.failedStarts = 0;
      this.readyNow.resolve();
    } else if (message.type === "answer") {
      // Its protocol's "answer" (protocol.ts): checked on arrival above.
      const { id, value } = message as unknown as ChildAnswer;
      this.answers.answer(id, value);
    } else this.options.onMessage(message as Exclude<Out, { type: "ready" } | ChildAnswer>);
  }

  /** After an unexpected stop: logged, questions to the dead child answered null, its work to the fresh one. */
  private restarted(stopped: Stopped): void {
    const { name, log, afterStop = "to take its jobs over" } = this.options;
    log.error({ ...stopped, jobs: this.held.size }, `${name} stopped; starting another ${afterStop}`);
    // One that stopped before it was ready had been sent nothing but its hello: what waits for ready goes to its
    // replacement.
    if (stopped.wasReady) {
      this.answers.dropAll();
      this.handOver(stopped);
    }
    this.options.onRestart?.(stopped);
  }

  private handOver(stopped: Stopped): void {
    const work = this.options.work;
    if (!work) return;
    for (const [key, held] of this.held) {
      held.crashes++;
      if (held.crashes < work.maxCrashes) continue;
      this.held.delete(key);
      work.onDrop(held.work, held.crashes, stopped);
    }
    // As they are once the fresh child is ready (a token renewed meanwhile), and only those still held.
    const kept = [...this.held.keys()];
    void this.ready.then(() => work.onHandOver(kept.flatMap((key) => this.held.get(key)?.work ?? [])));
  }
}

/**
 * A child that stopped before it was ready is forked again after 0.25 s, then 0.5 s, 1 s, … up to 30 s; one that had
 * run, at once.
 */
export function restartDelay(failedStarts: number): number {
  return failedStarts === 0 ? 0 : Math.min(30_000, 250 * 2 ** (failedStarts - 1));
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((settle) => (resolve = settle));
  return { promise, resolve };
}

/** How much lower a forked worker's CPU priority is than the intake's (nice): webhooks win the CPU. */
export const WORKER_NICENESS = 3;

/**
 * Lowers a freshly forked child's CPU priority below ours by `niceness` (it inherits ours; the
 * threads it starts later inherit its own), so that under load our event loop wins the CPU.
 *
 * Nice counts only within a session on Linux with autogroups (the default on most distributions):
 * the kernel shares the CPU between sessions first. A child in a session of its own (`ownSession`)
 * has its session's share lowered too, or a worker's job runner takes as much CPU as an intake on
 * the same machine: in the load bench (Redis, two workers beside the intake) the intake's webhook p99
 * went from 419–431 ms to 221–409 ms with the job runners' sessions lowered.
 */
export function lowerPriority(
  child: ChildProcess,
  niceness: number,
  log: Logger,
  what: string,
  ownSession = false,
): void {
  if (!child.pid || niceness <= 0) return;
  const nice = Math.min(19, os.getPriority() + niceness);
  try {
    os.setPriority(child.pid, nice);
  } catch (error) {
    log.warn(
      { err: error },
      `could not lower ${what}'s CPU priority; it competes with this process for the CPU under load`,
    );
    return;
  }
  if (!ownSession) return;
  try {
    writeFileSync(`/proc/${child.pid}/autogroup`, String(nice));
  } catch {
    // No autogroups here (not Linux, or a kernel without them): nice alone counts.
  }
}
