import { existsSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { z } from "zod";
import { PendingAnswers } from "../../src/jobs/pending-answers.js";
import { restartDelay, SupervisedChild } from "../../src/jobs/supervised-child.js";
import { tempDir } from "../helpers/git-repo.js";

const log = { info: () => {}, warn: () => {}, error: () => {} };
const messages = z.discriminatedUnion("type", [
  z.object({ type: z.literal("ready") }),
  z.object({ type: z.literal("echo"), text: z.string() }),
]);

/** A child that says it is ready only when told to, and echoes what it gets twice, in one batch. */
function childEntry(): string {
  const entry = path.join(tempDir("supervised-child-"), "child.mjs");
  writeFileSync(
    entry,
    // Messages sent in one turn arrive as one batch (an array), as src/jobs/ipc-batch.ts sends them.
    `process.on("message", (raw) => {
      for (const message of Array.isArray(raw) ? raw : [raw]) {
        if (message.type === "start") continue;
        if (message.type === "go") process.send({ type: "ready" });
        else process.send([{ type: "echo", text: message.text }, { type: "echo", text: message.text + " again" }]);
      }
    });`,
  );
  return entry;
}

it("is ready only once its child says so, and again not while a replacement starts", async () => {
  const heard: string[] = [];
  const restarts: Array<string | null> = [];
  const delays: number[] = [];
  const child = new SupervisedChild<{ type: string; text?: string }, z.output<typeof messages>>({
    entry: childEntry(),
    env: process.env,
    name: "the test child",
    log,
    messages,
    hello: { type: "start" },
    onMessage: (message) => void (message.type === "echo" && heard.push(message.text)),
    onRestart: ({ signal, restartInMs }) => void (restarts.push(signal), delays.push(restartInMs)),
  });
  try {
    expect(child.isReady).toBe(false);
    child.send({ type: "go" });
    await child.ready;
    expect(child.isReady).toBe(true);
    child.send({ type: "say", text: "hello" });
    await expect.poll(() => heard).toEqual(["hello", "hello again"]);

    const first = child.process;
    first?.kill("SIGKILL");
    await expect.poll(() => restarts).toEqual(["SIGKILL"]);
    // A child that had been ready is replaced at once.
    expect(delays).toEqual([0]);
    expect(child.process).not.toBe(first);
    expect(child.isReady).toBe(false);
    child.send({ type: "go" });
    await child.ready;
    expect(child.isReady).toBe(true);
  } finally {
    child.stopSupervising();
    child.process?.kill("SIGKILL");
  }
});

/** A child that exits at once on its first `failures` starts (counted in a file), then is ready when told its hello. */
function failingEntry(failures: number): string {
  const dir = tempDir("supervised-child-failing-");
  const entry = path.join(dir, "child.mjs");
  const count = path.join(dir, "starts");
  writeFileSync(count, "0");
  writeFileSync(
    entry,
    `import { readFileSync, writeFileSync } from "node:fs";
    const starts = Number(readFileSync(${JSON.stringify(count)}, "utf8")) + 1;
    writeFileSync(${JSON.stringify(count)}, String(starts));
    if (starts <= ${failures}) process.exit(1);
    process.on("message", () => process.send({ type: "ready" }));`,
  );
  return entry;
}

it("forks a child that keeps stopping before it is ready again later and later, and answers ready waiters with the one that starts", async () => {
  const delays: number[] = [];
  const child = new SupervisedChild<{ type: string }, z.output<typeof messages>>({
    entry: failingEntry(3),
    env: process.env,
    name: "the test child",
    log,
    messages,
    hello: { type: "start" },
    onMessage: () => {},
    onRestart: ({ code, restartInMs }) => {
      expect(code).toBe(1);
      delays.push(restartInMs);
    },
  });
  try {
    // Asked before the first child stopped: answered by the fourth.
    await child.ready;
    expect(delays).toEqual([250, 500, 1_000]);
    expect(child.isReady).toBe(true);
  } finally {
    child.stopSupervising();
    child.process?.kill("SIGKILL");
  }
});

it("waits from a quarter of a second to at most 30 s between starts that fail", () => {
  expect([0, 1, 2, 3, 7, 8, 20].map(restartDelay)).toEqual([0, 250, 500, 1_000, 16_000, 30_000, 30_000]);
});

it("takes an answer for a question asked about something only if it names the same (a fresh process numbers its questions from 0 again)", async () => {
  const answers = new PendingAnswers<string>();
  const about = answers.ask(undefined, "delivery-b");
  const plain = answers.ask();
  answers.answer(about.id, "delivery-a's token", "delivery-a");
  answers.answer(about.id, "no delivery named");
  answers.answer(plain.id, "plain", "anything");
  answers.answer(about.id, "delivery-b's token", "delivery-b");
  expect(await Promise.all([about.answer, plain.answer])).toEqual(["delivery-b's token", "plain"]);
  const late = answers.ask(1, "delivery-c");
  expect(await late.answer).toBeNull();
});

/** A child that is ready at its hello and dies on "die", so its parent sees what it held taken over. */
function mortalEntry(): string {
  const entry = path.join(tempDir("supervised-child-mortal-"), "child.mjs");
  writeFileSync(
    entry,
    `process.on("message", (raw) => { for (const message of Array.isArray(raw) ? raw : [raw]) { if (message.type === "start") process.send({ type: "ready" }); else if (message.type === "die") process.exit(3); } });`,
  );
  return entry;
}

it("hands the work a dead child held to the fresh one in the order it was tracked, and drops what outlived too many children", async () => {
  const handedOver: string[][] = [];
  const dropped: Array<{ work: string; crashes: number; code: number | null }> = [];
  const child = new SupervisedChild<{ type: string }, z.output<typeof messages>, string>({
    entry: mortalEntry(),
    env: process.env,
    name: "the test child",
    log,
    messages,
    hello: { type: "start" },
    onMessage: () => {},
    work: {
      maxCrashes: 2,
      onHandOver: (work) => void handedOver.push(work),
      onDrop: (work, crashes, { code }) => void dropped.push({ work, crashes, code }),
    },
  });
  try {
    await child.ready;
    child.track("b", "job b");
    child.track(1, "run 1");
    child.track("a", "job a");
    child.settle(1);
    child.send({ type: "die" });
    await expect.poll(() => handedOver).toEqual([["job b", "job a"]]);
    expect(child.heldCount).toBe(2);

    child.settle("b");
    child.track("c", "job c");
    child.send({ type: "die" });
    // "a" died with two children: dropped; "c" with one: handed over.
    await expect.poll(() => handedOver).toEqual([["job b", "job a"], ["job c"]]);
    expect(dropped).toEqual([{ work: "job a", crashes: 2, code: 3 }]);
    expect(child.tracked("a")).toBeUndefined();
    expect(child.tracked("c")).toBe("job c");
  } finally {
    child.stopSupervising();
    child.process?.kill("SIGKILL");
  }
});

it("answers a question asked of a child that dies before answering with null", async () => {
  const child = new SupervisedChild<{ type: string; id?: number }, z.output<typeof messages>>({
    entry: mortalEntry(),
    env: process.env,
    name: "the test child",
    log,
    messages,
    hello: { type: "start" },
    onMessage: () => {},
  });
  try {
    const answer = child.ask((id) => ({ type: "die", id }));
    expect(await answer).toBeNull();
  } finally {
    child.stopSupervising();
    child.process?.kill("SIGKILL");
  }
});

/** A child that answers its hello with where it runs: its session, its nice and its autogroup (Linux's /proc). */
function whereEntry(): string {
  const entry = path.join(tempDir("supervised-where-"), "child.mjs");
  writeFileSync(
    entry,
    `import { existsSync, readFileSync } from "node:fs";
    import os from "node:os";
    const stat = readFileSync("/proc/self/stat", "utf8");
    const session = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3]);
    const autogroup = existsSync("/proc/self/autogroup") ? readFileSync("/proc/self/autogroup", "utf8").trim() : null;
    process.on("message", (raw) => {
      if ((Array.isArray(raw) ? raw : [raw]).some((message) => message.type === "shutdown")) process.exit(0);
      process.send([{ type: "ready" }, { type: "where", pid: process.pid, session, nice: os.getPriority(), autogroup }]);
    });`,
  );
  return entry;
}

type Where = { pid: number; session: number; nice: number; autogroup: string | null };

async function whereChildRuns(options: { niceness: number; ownSession: boolean }): Promise<Where> {
  let where: Where | undefined;
  const heard = z.discriminatedUnion("type", [
    z.object({ type: z.literal("ready") }),
    z.object({
      type: z.literal("where"),
      pid: z.number(),
      session: z.number(),
      nice: z.number(),
      autogroup: z.string().nullable(),
    }),
  ]);
  const child = new SupervisedChild<{ type: string }, z.output<typeof heard>>({
    entry: whereEntry(),
    env: process.env,
    name: "the test child",
    log,
    messages: heard,
    hello: { type: "start" },
    onMessage: (message) => void (message.type === "where" && (where = message)),
    ...options,
  });
  try {
    await child.ready;
    await expect.poll(() => where).toBeDefined();
    return where!;
  } finally {
    await child.stop({ type: "shutdown" }, 5_000);
  }
}

function ownStat(): { session: number; autogroup: string | null } {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const session = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3]);
  return {
    session,
    autogroup: existsSync("/proc/self/autogroup") ? readFileSync("/proc/self/autogroup", "utf8").trim() : null,
  };
}

// Linux (/proc), as the App is: CI runs it. The autogroup line is checked where the kernel has autogroups (CI's does).
it("puts a child with ownSession in a session of its own, its autogroup as low as its nice; others stay in ours", async () => {
  const parent = ownStat();
  const own = await whereChildRuns({ niceness: 4, ownSession: true });
  expect(own.session).toBe(own.pid);
  expect(own.session).not.toBe(parent.session);
  expect(own.nice).toBe(Math.min(19, os.getPriority() + 4));
  // Where the kernel has autogroups, the child's session has one of its own, as low as the child.
  if (parent.autogroup !== null) expect(own.autogroup).toMatch(new RegExp(`^/autogroup-\\d+ nice ${own.nice}$`));

  const shared = await whereChildRuns({ niceness: 4, ownSession: false });
  expect(shared.session).toBe(parent.session);
  expect(shared.nice).toBe(Math.min(19, os.getPriority() + 4));
  expect(shared.autogroup).toBe(parent.autogroup);
});
