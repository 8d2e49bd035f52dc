import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Most tests wait on git, bubblewrap, Redis and local servers rather than the CPU: three forks on two
    // cores took the suite from 8½ to 3½ minutes here.
    maxWorkers: 3,
    env: { LOG_LEVEL: "silent" },
    // A passing run prints a line of dots and the summary (a failing test is named, with its output and
    // error): console output of passing tests is dropped. `--reporter=default` lists every file instead.
    silent: "passed-only",
    slowTestThreshold: 10_000,
    // BLUEPRINT_TEST_REPORT=file.json also writes each file's and test's duration there (for the slowest files).
    reporters: process.env.BLUEPRINT_TEST_REPORT
      ? ["dot", ["json", { outputFile: process.env.BLUEPRINT_TEST_REPORT }]]
      : ["dot"],
  },
});
