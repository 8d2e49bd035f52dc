import { writeFileSync } from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { z } from "zod";
import { SupervisedChild } from "../../src/jobs/supervised-child.js";
import { tempDir } from "../helpers/git-repo.js";

const messages = z.discriminatedUnion("type", [z.object({ type: z.literal("ready") }), z.object({ type: z.literal("echo"), text: z.string() })]);

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
  const child = new SupervisedChild<{ type: string; text?: string }, z.output<typeof messages>>({
    entry: childEntry(),
    env: process.env,
    messages,
    hello: { type: "start" },
    onMessage: (message) => void (message.type === "echo" && heard.push(message.text)),
    onRestart: ({ signal }) => void restarts.push(signal),
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
