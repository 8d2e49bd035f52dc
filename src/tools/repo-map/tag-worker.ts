// The worker thread that parses files for repo_map (see tag-pool.ts): one batch of files per message.
import { parentPort } from "node:worker_threads";
import { parseTags } from "./parse-tags.js";
import type { ParseBatch, ParseBatchResult, ParseOutcome } from "./tag-pool.js";

const port = parentPort;
if (!port) throw new Error("tag-worker.js runs as a worker thread");

port.on("message", (batch: ParseBatch) => {
  void parseBatch(batch).then((result) => port.postMessage(result));
});

async function parseBatch(batch: ParseBatch): Promise<ParseBatchResult> {
  const outcomes: ParseOutcome[] = [];
  for (const job of batch.jobs) {
    try {
      outcomes.push(await parseTags(job.language, job.text));
    } catch (error) {
      outcomes.push({ error: error instanceof Error ? error.message : String(error) });
    }
  }
  return { id: batch.id, outcomes };
}
