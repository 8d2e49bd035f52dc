import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { Slots } from "../../src/shared/slots.js";

// The tasks take time on vi's fake clock: which task runs when follows from the slots alone, on any machine.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
});
afterEach(() => {
  vi.useRealTimers();
});

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
  expect(slots.running).toBe(2);
  // The first two end after 10 ms; the next two take their slots then, and the last waits on.
  await vi.advanceTimersByTimeAsync(10);
  expect(order).toEqual([1, 2]);
  expect([slots.running, slots.queued]).toEqual([2, 1]);
  await vi.advanceTimersByTimeAsync(20);
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
  const settled = Promise.allSettled([0, 1, 2, 3, 4].map((i) => limit.run(task(i))));
  // After 5 ms both first tasks have ended, the failed one too: the next two have their slots.
  await vi.advanceTimersByTimeAsync(5);
  expect(started).toEqual([0, 1, 2, 3]);
  await vi.advanceTimersByTimeAsync(10);
  expect(started).toEqual([0, 1, 2, 3, 4]);
  const results = await settled;
  expect(peak).toBe(2);
  expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled", "fulfilled"]);
  expect(limit.running).toBe(0);
});
