import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ThreadPort } from "../../src/workflow/ports.js";
import { TrackingComment } from "../../src/workflow/surfaces/tracking-comment.js";

const INTERVAL_MS = 5000;
const COMMENT_ID = 7;

/** A thread whose comment edits are recorded in the order they are sent; `hold()` keeps the next edit in flight. */
function fakeThread() {
  const edits: string[] = [];
  let held: { release: () => void; fail: (error: Error) => void } | null = null;
  let holdNext = false;
  const updateComment = vi.fn(async (id: number, body: string) => {
    expect(id).toBe(COMMENT_ID);
    edits.push(body);
    if (!holdNext) return;
    holdNext = false;
    await new Promise<void>((resolve, reject) => (held = { release: resolve, fail: reject }));
  });
  const port = { updateComment } as Pick<ThreadPort, "updateComment"> as ThreadPort;
  return {
    port,
    edits,
    hold: () => (holdNext = true),
    release: () => held?.release(),
    fail: (error: Error) => held?.fail(error),
  };
}

function tracking(thread: ReturnType<typeof fakeThread>, onError: (error: unknown) => void = () => undefined) {
  return new TrackingComment(
    thread.port,
    COMMENT_ID,
    "https://github.com/o/r/issues/1#issuecomment-7",
    INTERVAL_MS,
    onError,
  );
}

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe("TrackingComment", () => {
  it("coalesces progress updates within the interval: one edit per interval, carrying the latest body", async () => {
    const thread = fakeThread();
    const comment = tracking(thread);
    for (let n = 1; n <= 10; n++) comment.progress(`p${n}`);
    await vi.advanceTimersByTimeAsync(0);
    expect(thread.edits).toEqual(["p10"]);

    // 40 more updates over the next 4 s: still inside the interval, so nothing is sent yet.
    for (let n = 11; n <= 50; n++) {
      comment.progress(`p${n}`);
      await vi.advanceTimersByTimeAsync(100);
    }
    expect(thread.edits).toEqual(["p10"]);
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(thread.edits).toEqual(["p10", "p50"]);

    // Quiet afterwards: no repeated edits.
    await vi.advanceTimersByTimeAsync(10 * INTERVAL_MS);
    expect(thread.edits).toEqual(["p10", "p50"]);
  });

  it("sends the final body at once, even right after a progress edit", async () => {
    const thread = fakeThread();
    const comment = tracking(thread);
    comment.progress("p1");
    await vi.advanceTimersByTimeAsync(0);
    await comment.final("done");
    expect(thread.edits).toEqual(["p1", "done"]);
  });

  it("sends the final body last when a progress edit is still in flight, and drops the progress waiting behind it", async () => {
    const thread = fakeThread();
    const comment = tracking(thread);
    thread.hold();
    comment.progress("p1");
    await vi.advanceTimersByTimeAsync(0);
    expect(thread.edits).toEqual(["p1"]);
    comment.progress("p2");
    let finished = false;
    const final = comment.final("done").then(() => (finished = true));
    await vi.advanceTimersByTimeAsync(0);
    // The final edit waits for the one in flight, so GitHub never ends up showing an older body.
    expect(thread.edits).toEqual(["p1"]);
    expect(finished).toBe(false);
    thread.release();
    await final;
    await vi.advanceTimersByTimeAsync(10 * INTERVAL_MS);
    expect(thread.edits).toEqual(["p1", "done"]);
  });

  it("sends the final body when the progress edit before it failed, and reports that failure", async () => {
    const thread = fakeThread();
    const errors: unknown[] = [];
    const comment = tracking(thread, (error) => errors.push(error));
    thread.hold();
    comment.progress("p1");
    await vi.advanceTimersByTimeAsync(0);
    thread.fail(new Error("GitHub said 502"));
    await comment.final("done");
    expect(thread.edits).toEqual(["p1", "done"]);
    expect(errors).toEqual([new Error("GitHub said 502")]);
  });

  it("sends no progress edit after final(), whether scheduled before it or asked for after it", async () => {
    const thread = fakeThread();
    const comment = tracking(thread);
    comment.progress("p1");
    await vi.advanceTimersByTimeAsync(0);
    comment.progress("p2"); // scheduled for the end of the interval
    await comment.final("done");
    comment.progress("p3");
    await vi.advanceTimersByTimeAsync(10 * INTERVAL_MS);
    expect(thread.edits).toEqual(["p1", "done"]);
  });

  it("write() goes out at once after the edit in flight, replaces the progress waiting, and later progress still follows", async () => {
    const thread = fakeThread();
    const comment = tracking(thread);
    thread.hold();
    comment.progress("p1");
    await vi.advanceTimersByTimeAsync(0);
    comment.progress("p2"); // waiting behind p1: the write below makes it stale
    const saved = comment.write("step done");
    await vi.advanceTimersByTimeAsync(0);
    expect(thread.edits).toEqual(["p1"]);
    thread.release();
    await saved;
    comment.progress("retrying");
    await vi.advanceTimersByTimeAsync(INTERVAL_MS);
    expect(thread.edits).toEqual(["p1", "step done", "retrying"]);
  });

  it("write() tells its caller when the edit fails, and the next edit still goes out", async () => {
    const thread = fakeThread();
    const errors: unknown[] = [];
    const comment = tracking(thread, (error) => errors.push(error));
    thread.hold();
    const saved = comment.write("step done");
    await vi.advanceTimersByTimeAsync(0);
    thread.fail(new Error("GitHub said 502"));
    await expect(saved).rejects.toThrow("GitHub said 502");
    await comment.final("report");
    expect(thread.edits).toEqual(["step done", "report"]);
    expect(errors).toEqual([]);
  });
});
