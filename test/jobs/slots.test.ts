import { expect, it } from "vitest";
import { Slots } from "../../src/jobs/slots.js";

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
