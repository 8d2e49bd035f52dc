import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { CachedTags } from "./disk-cache.js";
import type { OutlineJob } from "./outline-file.js";

/** A batch of files for one worker: it reads them from `root` itself, so the main thread never holds their text. */
export interface OutlineBatch {
  id: number;
  root: string;
  jobs: OutlineJob[];
}
export interface OutlineBatchResult {
  id: number;
  outcomes: CachedTags[];
}

/** Files per message at most: enough to amortise the hop. */
const MAX_BATCH = 32;
/** Batches per worker still to come, at least: smaller batches near the end keep every worker busy to the last file. */
const BATCHES_PER_WORKER = 4;
/** Idle workers hold the grammars in memory; let them go when repo_map has not run for a while. */
const IDLE_MS = 30_000;

/**
 * Where the worker's code is. Built (lib/): the compiled tag-worker.js beside this file. From
 * source (tests, tsx): the .ts file, loaded through tsx. In the Action's single-file bundle there
 * is no worker file and no grammar files: parsing is unavailable and repo_map uses the regex outline.
 */
function workerSource(): { url: URL; viaTsx: boolean } | undefined {
  const fromSource = import.meta.url.endsWith(".ts");
  const url = new URL(fromSource ? "./tag-worker.ts" : "./tag-worker.js", import.meta.url);
  if (url.protocol !== "file:" || !existsSync(fileURLToPath(url))) return undefined;
  return { url, viaTsx: fromSource };
}

function startWorker(source: { url: URL; viaTsx: boolean }): Worker {
  if (!source.viaTsx) return new Worker(source.url);
  // The package's "import" entry sits beside the "require" one that createRequire resolves.
  const tsxApi = pathToFileURL(
    createRequire(import.meta.url)
      .resolve("tsx/esm/api")
      .replace(/\.cjs$/, ".mjs"),
  ).href;
  const script = `import(${JSON.stringify(tsxApi)}).then(({ tsImport }) => tsImport(${JSON.stringify(source.url.href)}, ${JSON.stringify(source.url.href)}));`;
  return new Worker(script, { eval: true });
}

interface PoolWorker {
  worker: Worker;
  pending: Map<number, (result: OutlineBatchResult | Error) => void>;
}

let pool: PoolWorker[] | undefined;
let idleTimer: NodeJS.Timeout | undefined;
let nextBatchId = 1;

function workerCount(): number {
  return Math.max(1, Math.min(4, os.availableParallelism()));
}

function ensurePool(): PoolWorker[] | undefined {
  if (pool) return pool;
  const source = workerSource();
  if (!source) return undefined;
  const started: PoolWorker[] = [];
  for (let i = 0; i < workerCount(); i++) {
    const entry: PoolWorker = { worker: startWorker(source), pending: new Map() };
    entry.worker.on("message", (result: OutlineBatchResult) => {
      const settle = entry.pending.get(result.id);
      entry.pending.delete(result.id);
      settle?.(result);
    });
    const fail = (error: Error) => {
      for (const settle of entry.pending.values()) settle(error);
      entry.pending.clear();
      if (pool === started) pool = undefined;
      void entry.worker.terminate();
    };
    entry.worker.on("error", fail);
    entry.worker.on("exit", () => fail(new Error("the parser worker exited")));
    entry.worker.unref();
    started.push(entry);
  }
  pool = started;
  return pool;
}

function send(entry: PoolWorker, root: string, jobs: OutlineJob[]): Promise<OutlineBatchResult> {
  const id = nextBatchId++;
  return new Promise((resolve, reject) => {
    entry.pending.set(id, (result) => (result instanceof Error ? reject(result) : resolve(result)));
    entry.worker.postMessage({ id, root, jobs } satisfies OutlineBatch);
  });
}

/**
 * Reads and outlines the files on worker threads, so a big repository never blocks the event loop
 * (webhooks, other jobs). Undefined when parsers are unavailable here (the Action bundle); throws if a worker dies.
 */
export async function outlineInWorkers(
  root: string,
  jobs: OutlineJob[],
  signal?: AbortSignal,
): Promise<CachedTags[] | undefined> {
  const workers = ensurePool();
  if (!workers) return undefined;
  clearTimeout(idleTimer);
  // Referenced while busy, so a short-lived process (the CLI) waits for them; unreferenced when idle.
  for (const entry of workers) entry.worker.ref();
  const outcomes = new Array<CachedTags>(jobs.length);
  let next = 0;
  let failed = false;
  const drive = async (entry: PoolWorker) => {
    while (next < jobs.length && !failed) {
      signal?.throwIfAborted();
      const start = next;
      next += Math.max(
        1,
        Math.min(MAX_BATCH, Math.floor((jobs.length - start) / (workers.length * BATCHES_PER_WORKER))),
      );
      const result = await send(entry, root, jobs.slice(start, next));
      result.outcomes.forEach((outcome, offset) => (outcomes[start + offset] = outcome));
    }
  };
  try {
    // Every worker's batch in hand finishes before a failure or an abort is reported: once this
    // settles, no worker reads the tree any more (the caller may remove it).
    const settled = await Promise.allSettled(
      workers.map((entry) =>
        drive(entry).catch((error: unknown) => {
          // The other workers stop after the batch in hand.
          failed = true;
          throw error;
        }),
      ),
    );
    const failure = settled.find((outcome) => outcome.status === "rejected");
    if (failure) throw failure.reason;
  } finally {
    for (const entry of workers) entry.worker.unref();
    idleTimer = setTimeout(stopParserWorkers, IDLE_MS);
    idleTimer.unref();
  }
  return outcomes;
}

/**
 * Starts the parser workers ahead of a map that will likely parse (the first in this process), so
 * they load while git lists the tree. Unused, they end when idle like after any map.
 */
export function startParserWorkers(): void {
  const started = pool === undefined;
  if (!ensurePool() || !started) return;
  clearTimeout(idleTimer);
  idleTimer = setTimeout(stopParserWorkers, IDLE_MS);
  idleTimer.unref();
}

/** Ends the parser workers (they also end on their own when idle). */
export function stopParserWorkers(): void {
  const current = pool;
  pool = undefined;
  for (const entry of current ?? []) void entry.worker.terminate();
}
