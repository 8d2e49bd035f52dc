import { Worker } from "node:worker_threads";
import { z } from "zod";
import {
  jobTokenSchema,
  ReusedTokens,
  type CredentialsLog,
  type JobToken,
  type JobTokenSource,
  type TokenFor,
} from "./job-token.js";

export interface MintThreadOptions {
  appId: number;
  privateKey: string;
  /** api.github.com, or a GitHub Enterprise `/api/v3`. */
  baseUrl: string;
  log: CredentialsLog;
  /** The compiled thread entry (lib/credentials/mint-thread-main.js, next to this file once built). */
  entry?: string | URL;
}

/** A token request's longest wait, all retries included (GitHub's own answer times out after 30 s a try). */
const MINT_TIMEOUT_MS = 3 * 60_000;

/** What the thread answers: a token, an error's message, or a log line. */
export const fromMintThreadSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("token"), id: z.number().int(), token: jobTokenSchema }),
  z.object({
    type: z.literal("failed"),
    id: z.number().int(),
    message: z.string(),
    status: z.number().int().optional(),
  }),
  z.object({
    type: z.literal("log"),
    level: z.enum(["info", "warn", "error"]),
    fields: z.record(z.string(), z.unknown()),
    message: z.string(),
  }),
]);
export type FromMintThread = z.output<typeof fromMintThreadSchema>;
export type ToMintThread = { id: number; job: TokenFor };

/**
 * Job tokens minted on a thread of their own, inside the intake's process (the App's key never
 * leaves it). The intake's event loop is busy answering webhooks during a burst, and a mint's HTTP
 * exchange takes several turns of the loop that carries it: on the intake's loop, each turn waited
 * behind a hundred webhooks and the first job's token took most of a second. The thread's loop
 * carries only mints; the intake's pays one message each way.
 */
export class MintThread implements JobTokenSource {
  private worker: Worker | null = null;
  private nextId = 0;
  private readonly waiting = new Map<
    number,
    { message: ToMintThread; resent: boolean; resolve(token: JobToken): void; reject(error: Error): void }
  >();
  /** A token still good for a while is reused here, without a message to the thread and back. */
  private readonly reused = new ReusedTokens((job) => this.ask(job));

  constructor(private readonly options: MintThreadOptions) {
    // Started now: loading the thread takes a few hundred milliseconds, which the first job should not wait for.
    this.start();
  }

  forJob(job: TokenFor): Promise<JobToken> {
    return this.reused.forJob(job);
  }

  private ask(job: TokenFor): Promise<JobToken> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise<JobToken>((resolve, reject) => {
      // Never left hanging: a job whose token never comes has its claim released (a redelivery starts it).
      const timer = setTimeout(
        () =>
          this.settle(
            id,
            new Error(`no token for installation ${job.installationId} after ${MINT_TIMEOUT_MS / 1000} s`),
          ),
        MINT_TIMEOUT_MS,
      );
      timer.unref();
      const message: ToMintThread = {
        id,
        job: { installationId: job.installationId, kind: job.kind, repository: { name: job.repository.name } },
      };
      this.waiting.set(id, {
        message,
        resent: false,
        resolve: (token) => (clearTimeout(timer), resolve(token)),
        reject: (error) => (clearTimeout(timer), reject(error)),
      });
      worker.postMessage(message);
    });
  }

  /** Stops the thread; tokens still being minted are refused. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.failAll(new Error("the token thread was stopped"));
    await worker?.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const { appId, privateKey, baseUrl, log } = this.options;
    const worker = new Worker(this.options.entry ?? new URL("./mint-thread-main.js", import.meta.url), {
      workerData: { appId, privateKey, baseUrl },
    });
    // Never what keeps the process up: the server does that.
    worker.unref();
    worker.on("message", (raw: unknown) => {
      const parsed = fromMintThreadSchema.safeParse(raw);
      if (!parsed.success) {
        log.error({ issues: parsed.error.issues }, "the token thread sent a malformed message");
        const id = (raw as { id?: unknown } | null)?.id;
        if (typeof id === "number") this.settle(id, new Error("the token thread's answer was malformed"));
        return;
      }
      const message = parsed.data;
      if (message.type === "log") return log[message.level](message.fields, message.message);
      if (message.type === "token") this.settle(message.id, message.token);
      else
        this.settle(
          message.id,
          Object.assign(new Error(message.message), message.status === undefined ? {} : { status: message.status }),
        );
    });
    worker.on("messageerror", (error) =>
      log.error({ err: error }, "a message from the token thread could not be read"),
    );
    const stopped = (error: Error) => {
      if (this.worker !== worker) return;
      this.worker = null;
      log.error(
        { err: error, pending: this.waiting.size },
        "the token thread stopped; starting another for the tokens it was minting",
      );
      this.retryOnce(error);
    };
    worker.on("error", stopped);
    worker.on("exit", (code) => stopped(new Error(`the token thread exited (code ${code})`)));
    this.worker = worker;
    return worker;
  }

  private settle(id: number, outcome: JobToken | Error): void {
    const waiter = this.waiting.get(id);
    this.waiting.delete(id);
    if (outcome instanceof Error) waiter?.reject(outcome);
    else waiter?.resolve(outcome);
  }

  /**
   * A token request is safe to repeat: those the stopped thread was minting go to a fresh one, once.
   * Asked twice already (the thread keeps dying), they are refused: their jobs' claims are released.
   */
  private retryOnce(error: Error): void {
    if (this.waiting.size === 0) return;
    for (const [id, waiter] of this.waiting) {
      if (waiter.resent) {
        this.waiting.delete(id);
        waiter.reject(error);
      }
    }
    if (this.waiting.size === 0) return;
    const worker = this.start();
    for (const waiter of this.waiting.values()) {
      waiter.resent = true;
      worker.postMessage(waiter.message);
    }
  }

  private failAll(error: Error): void {
    for (const waiter of this.waiting.values()) waiter.reject(error);
    this.waiting.clear();
  }
}
