// The worker thread that reads and outlines files for repo_map (see tag-pool.ts): one batch of files per message.
import { parentPort } from "node:worker_threads";
import type { CachedTags } from "./disk-cache.js";
import { outlineFile } from "./outline-file.js";
import { parseTags, prepareParser } from "./parse-tags.js";
import { HeadReader } from "./read-head.js";
import type { OutlineBatch, OutlineBatchResult } from "./tag-pool.js";

const port = parentPort;
if (!port) throw new Error("tag-worker.js runs as a worker thread");

// While the main thread lists the tree and sends the first batch.
prepareParser();

port.on("message", (batch: OutlineBatch) => {
  void outlineBatch(batch).then((result) => port.postMessage(result));
});

async function outlineBatch(batch: OutlineBatch): Promise<OutlineBatchResult> {
  const reader = new HeadReader(batch.root);
  const outcomes: CachedTags[] = [];
  for (const job of batch.jobs) {
    try {
      outcomes.push(await outlineFile(reader, job, parseTags));
    } catch (error) {
      outcomes.push({ note: `not read: ${error instanceof Error ? error.message : String(error)}`, worktree: true });
    }
  }
  return { id: batch.id, outcomes };
}
