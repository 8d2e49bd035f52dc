import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import type { JobToken, JobTokenSource, TokenFor } from "../../src/credentials/index.js";
import type { Job } from "../../src/jobs/job.js";
import { LocalWorkerBackend } from "../../src/jobs/local-worker.js";
import { tempDir } from "../helpers/git-repo.js";

const log = { info: () => {}, warn: () => {}, error: () => {} };
const token: JobToken = {
  token: "ghs_local-worker-test",
  expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
  permissions: {},
};

/**
 * A stand-in local worker speaking its part of protocol.ts: it records every message it gets and, for
 * each job, asks for a fresh token for that job's delivery and for one it was never handed.
 */
function fakeWorker(): { entry: string; seen: () => Array<Record<string, unknown>> } {
  const dir = tempDir("local-worker-");
  const record = path.join(dir, "seen.jsonl");
  const entry = path.join(dir, "worker.mjs");
  writeFileSync(record, "");
  writeFileSync(
    entry,
    `import { appendFileSync } from "node:fs";
    process.on("message", (raw) => {
      for (const message of Array.isArray(raw) ? raw : [raw]) {
        appendFileSync(${JSON.stringify(record)}, JSON.stringify(message) + "\\n");
        if (message.type === "start") process.send({ type: "ready" });
        else if (message.type === "shutdown") process.exit(0);
        else if (message.type === "job") process.send([{ type: "token-request", id: 0, deliveryId: message.job.deliveryId }, { type: "token-request", id: 1, deliveryId: "never-handed" }]);
      }
    });
    process.on("disconnect", () => process.exit(0));`,
  );
  const seen = () =>
    readFileSync(record, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { entry, seen };
}

let backend: LocalWorkerBackend | undefined;
afterEach(() => backend?.shutdown("test over", 2_000));

it("mints a fresh token only for a job it handed the worker, never for a delivery the worker names on its own", async () => {
  const fake = fakeWorker();
  const minted: TokenFor[] = [];
  const tokens: JobTokenSource = {
    forJob: async (held) => (minted.push(held), { ...token, token: `ghs_fresh-${minted.length}` }),
  };
  backend = new LocalWorkerBackend({ entry: fake.entry, tokens, stateKey: Buffer.from("state"), log, niceness: 0 });
  const job = { kind: "plan", deliveryId: "delivery-1", receivedAt: 1 } as unknown as Job;
  expect(await backend.submit({ job, keys: ["delivery-1"] })).toBe(true);
  const answers = () => fake.seen().filter((message) => message.type === "token");
  await expect.poll(answers).toHaveLength(2);
  expect(answers()).toEqual(
    expect.arrayContaining([
      { type: "token", id: 0, deliveryId: "delivery-1", token: { ...token, token: "ghs_fresh-2" } },
      { type: "token", id: 1, deliveryId: "never-handed", token: null },
    ]),
  );
  // Once for the hand-over, once for the renewal: never for the delivery the worker made up.
  expect(minted).toEqual([job, job]);
});
