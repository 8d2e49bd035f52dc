/**
 * How long a test waits for something that should happen, on any machine. A wait in a test only ever fails it
 * when what it waits for never comes: it ends as soon as that happens, so a long limit costs a passing run
 * nothing, and a slow or loaded machine (two cores shared with other work, a CI runner) is never a failure.
 * Every wall-clock wait in the tests (`expect.poll`, `vi.waitFor`, the e2e clusters' `waitFor`, a process
 * becoming ready) uses `PATIENCE_MS`; a test's and a hook's own limit is `TEST_LIMIT_MS`, above a few such
 * waits in a row. What is about time itself runs on vitest's fake clock or is a benchmark figure.
 */
export const PATIENCE_MS = 120_000;

/** vitest's testTimeout and hookTimeout: a hung test fails after this, never a slow one. */
export const TEST_LIMIT_MS = 600_000;

/** The real setTimeout, taken before a test can fake the clock. */
const realSetTimeout = globalThis.setTimeout;

/**
 * A pause on the real clock, also while a test fakes timers: a wait for real work (a process, a queue) that leaves the
 * fake clock where it is, as `expect.poll` and `vi.waitFor` do not (they advance a fake clock on every attempt).
 */
export const realPause = (ms: number): Promise<void> => new Promise((resolve) => realSetTimeout(resolve, ms));
