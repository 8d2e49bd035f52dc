import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    env: { LOG_LEVEL: "silent" },
    // A passing run prints one line per file and the summary: console output of passing tests is
    // dropped (a failing test's is kept), and only tests slower than 10 s are named.
    silent: "passed-only",
    slowTestThreshold: 10_000,
    reporters: ["default"],
  },
});
