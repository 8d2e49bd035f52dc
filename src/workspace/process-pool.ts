import { Worker } from "node:worker_threads";

export interface ProcessOptions {
  cwd: string;
  /** The child's whole environment (nothing is inherited). */
  env: Record<string, string>;
  maxBuffer?: number;
}

export interface ProcessResult {
  /** The exit code; null when the process could not start or was killed by a signal. */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Why there is no exit code (spawn failure, signal, output over maxBuffer). */
  failure: string | null;
}

/**
 * Runs short programs (git) from a worker thread. Starting a process forks the whole Node
 * process, which blocks the calling thread for milliseconds per call while the heap is large;
 * done on the main thread under load that delayed webhook responses and every other job (see
 * bench/load.ts). The worker is plain CommonJS evaluated from this string, so it also works
 * inside the Action's single-file bundle.
 */
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
const { execFile } = require("node:child_process");
parentPort.on("message", ({ id, file, args, options }) => {
  execFile(file, args, { ...options, encoding: "utf8", windowsHide: true }, (error, stdout, stderr) => {
    let code = 0;
    let failure = null;
    if (error) {
      code = typeof error.code === "number" ? error.code : null;
      if (code === null) failure = error.signal ? "killed by " + error.signal : String(error.code || error.message);
    }
    parentPort.postMessage({ id, result: { code, stdout: String(stdout ?? ""), stderr: String(stderr ?? ""), failure } });
  });
});
`;

interface Pending {
  resolve(result: ProcessResult): void;
}

class ProcessPool {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  run(file: string, args: readonly string[], options: ProcessOptions): Promise<ProcessResult> {
    const worker = this.ensureWorker();
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, { resolve });
      if (this.pending.size === 1) worker.ref();
      worker.postMessage({ id, file, args: [...args], options: { cwd: options.cwd, env: options.env, maxBuffer: options.maxBuffer ?? 64 * 1024 * 1024 } });
    });
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_SOURCE, { eval: true, execArgv: [] }); // CommonJS whatever flags started the process
    worker.unref();
    worker.on("message", ({ id, result }: { id: number; result: ProcessResult }) => {
      const pending = this.pending.get(id);
      this.pending.delete(id);
      if (this.pending.size === 0) worker.unref();
      pending?.resolve(result);
    });
    const fail = (reason: string) => {
      // Whatever was in flight gets an answer; the next call starts a new worker.
      if (this.worker === worker) this.worker = null;
      for (const [id, pending] of this.pending) {
        this.pending.delete(id);
        pending.resolve({ code: null, stdout: "", stderr: "", failure: reason });
      }
    };
    worker.on("error", (error) => fail(`the process runner failed: ${error.message}`));
    worker.on("exit", (code) => fail(`the process runner stopped (exit ${code})`));
    this.worker = worker;
    return worker;
  }
}

const pool = new ProcessPool();

/** Runs a program without a shell, off the main thread; never throws, the result says what happened. */
export function runProcess(file: string, args: readonly string[], options: ProcessOptions): Promise<ProcessResult> {
  return pool.run(file, args, options);
}
