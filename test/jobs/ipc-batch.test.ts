import { setImmediate as nextTurn } from "node:timers/promises";
import { expect, it } from "vitest";
import { IpcBatcher, unbatch } from "../../src/jobs/ipc-batch.js";

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
