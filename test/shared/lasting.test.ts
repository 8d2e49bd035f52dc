import { afterEach, describe, expect, it, vi } from "vitest";
import { lastingFor } from "../../src/shared/lasting.js";

describe("lastingFor", () => {
  afterEach(() => vi.useRealTimers());

  it("reads once while the answer is young, and again once it is old", async () => {
    vi.useFakeTimers();
    let reads = 0;
    const count = lastingFor(5_000, async () => ++reads);
    expect(await count()).toBe(1);
    vi.advanceTimersByTime(4_999);
    expect(await count()).toBe(1);
    vi.advanceTimersByTime(1);
    expect(await count()).toBe(2);
    expect(reads).toBe(2);
  });

  it("does not keep a failed read: the next call reads again", async () => {
    vi.useFakeTimers();
    let reads = 0;
    const count = lastingFor(60_000, async () => {
      reads++;
      if (reads === 1) throw new Error("Redis is away");
      return reads;
    });
    await expect(count()).rejects.toThrow("Redis is away");
    expect(await count()).toBe(2);
    expect(await count()).toBe(2);
  });
});
