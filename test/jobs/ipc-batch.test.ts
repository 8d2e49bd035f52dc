import { fork } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import { expect, it } from "vitest";
import { IpcBatcher, unbatch } from "../../src/jobs/ipc-batch.js";
import { tempDir } from "../helpers/git-repo.js";

it("sends the messages of one turn as one batch, in order, and a lone message as itself", async () => {
  const written: unknown[] = [];
  const outbox = new IpcBatcher<{ n: number }>((batch) => written.push(batch));
  outbox.send({ n: 1 });
  outbox.send({ n: 2 });
  outbox.send({ n: 3 });
  expect(written).toEqual([]);
  await nextTurn();
  expect(written).toEqual([[{ n: 1 }, { n: 2 }, { n: 3 }]]);

  outbox.send({ n: 4 });
  await nextTurn();
  expect(written.at(-1)).toEqual({ n: 4 });
  expect(written.flatMap(unbatch)).toEqual([1, 2, 3, 4].map((n) => ({ n })));
});

it("flushes what is queued at once when asked (before an exit), and never sends it twice", async () => {
  const written: unknown[] = [];
  const outbox = new IpcBatcher<string>((batch) => written.push(batch));
  outbox.send("a");
  outbox.send("b");
  outbox.flush();
  expect(written).toEqual([["a", "b"]]);
  await nextTurn();
  expect(written).toEqual([["a", "b"]]);
});

/**
 * A child on parentChannel with the job runner's part of the protocol (src/ run through tsx): it says
 * which messages reached it and which were refused, in the order they came.
 */
function childOnParentChannel(): string {
  const source = (file: string) => JSON.stringify(pathToFileURL(path.resolve(file)).href);
  const entry = path.join(tempDir("parent-channel-"), "child.ts");
  writeFileSync(
    entry,
    `import { parentChannel } from ${source("src/jobs/ipc-batch.ts")};
    import { toJobRunnerSchema } from ${source("src/jobs/protocol.ts")};
    const log = { info: () => {}, warn: () => {}, error: (_fields: object, message?: string) => void process.send?.({ refused: message }) };
    const heard = (message: { type: string }) => void process.send?.({ received: message.type });
    parentChannel({ messages: toJobRunnerSchema, log, name: "the test child", start: heard, receive: heard });`,
  );
  return entry;
}

it("checks every message a child gets against its protocol on arrival, batches undone in order, and refuses what is not one or comes before the start", async () => {
  const child = fork(childOnParentChannel(), [], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const heard: unknown[] = [];
  child.on("message", (message) => heard.push(message));
  try {
    child.send([
      // Before its start: logged, and never reaches the child.
      { type: "abort", id: 0, reason: "too early" },
      { type: "start", stateKey: "c3RhdGU=" },
      // A run without its job and token: not a message of the protocol.
      { type: "run", id: 1 },
      { type: "abort", id: 1, reason: "stopped" },
    ]);
    await expect.poll(() => heard).toHaveLength(5);
    expect(heard).toEqual([
      { refused: "the test child got a message before its start" },
      { received: "start" },
      { refused: "the test child got a message that is not one" },
      { received: "abort" },
      // The channel's own answer to the start, a turn later.
      { type: "ready" },
    ]);
  } finally {
    child.kill("SIGKILL");
  }
});

it("answers a child's questions once it has started, and on shutdown stops its work, says what it had left, and exits", async () => {
  const source = (file: string) => JSON.stringify(pathToFileURL(path.resolve(file)).href);
  const entry = path.join(tempDir("parent-channel-"), "child.ts");
  writeFileSync(
    entry,
    `import { parentChannel } from ${source("src/jobs/ipc-batch.ts")};
    import { toLocalWorkerSchema } from ${source("src/jobs/protocol.ts")};
    const log = { info: () => {}, warn: () => {}, error: () => {} };
    const send = parentChannel({
      messages: toLocalWorkerSchema, log, name: "the test child", start: () => {}, receive: () => {},
      answer: async (what: string) => (what === "stats" ? { asked: what } : undefined),
      stop: async (reason: string, timeoutMs: number) => send({ stopped: reason, timeoutMs }),
    });`,
  );
  const child = fork(entry, [], { execArgv: ["--import", "tsx"], stdio: ["ignore", "ignore", "inherit", "ipc"] });
  const heard: unknown[] = [];
  child.on("message", (message) => heard.push(...unbatch(message)));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  try {
    child.send([
      { type: "start", stateKey: "c3RhdGU=" },
      { type: "ask", id: 7, what: "stats" },
      { type: "ask", id: 8, what: "idle" },
    ]);
    await expect.poll(() => heard).toHaveLength(3);
    child.send({ type: "shutdown", reason: "a deploy", timeoutMs: 1_000 });
    expect(await exited).toBe(0);
    expect(heard).toEqual([
      { type: "ready" },
      { type: "answer", id: 7, value: { asked: "stats" } },
      { type: "answer", id: 8, value: null },
      { stopped: "a deploy", timeoutMs: 1_000 },
    ]);
  } finally {
    child.kill("SIGKILL");
  }
});
