import { expect, it } from "vitest";
import { Slots } from "../../src/shared/slots.js";

it("runs at most `size` tasks at once, the rest in arrival order", async () => {
  const slots = new Slots(2);
  let running = 0;
  let most = 0;
  const order: number[] = [];
  const task = (n: number) =>
    slots.run(async () => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 10));
      order.push(n);
      running--;
    });
  const all = Promise.all([1, 2, 3, 4, 5].map(task));
  expect(slots.queued).toBe(3);
  await all;
  expect(most).toBe(2);
  expect(order).toEqual([1, 2, 3, 4, 5]);
  expect(slots.running).toBe(0);
});

// Also the fetch limit of workspace/repo-cache.ts (BLUEPRINT_MAX_FETCHES) and the eval's task limit.
it("runs at most its limit of tasks at once, the rest in the order they came, and frees a slot when a task fails", async () => {
  const limit = new Slots(2);
  let running = 0;
  let peak = 0;
  const started: number[] = [];
  const task = (i: number) => async () => {
    started.push(i);
    running++;
    peak = Math.max(peak, running);
    await new Promise((resolve) => setTimeout(resolve, 5));
    running--;
    if (i === 1) throw new Error("boom");
    return i;
  };
  const results = await Promise.allSettled([0, 1, 2, 3, 4].map((i) => limit.run(task(i))));
  expect(peak).toBe(2);
  expect(started).toEqual([0, 1, 2, 3, 4]);
  expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled", "fulfilled"]);
});
