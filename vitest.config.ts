import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { defineConfig } from "vitest/config";
import { PATIENCE_MS, TEST_LIMIT_MS } from "./test/helpers/patience.js";
import LongestFirst from "./test/helpers/sequencer.js";

/**
 * Most test files share one module graph per worker (vitest's isolate: false), which saves most of the suite's import
 * time. Files that change what a later file would see run isolated (a fresh module graph per file, vitest's default):
 * mocked modules, stubbed globals or environment, fake clocks, the working directory, and the e2e files, which start
 * processes. Files that intercept HTTP with nock (directly or through a helper) share among themselves only: nock's
 * interceptors, once loaded, stay on for every later file of the worker.
 */
const ISOLATED = /vi\.mock\(|vi\.stubEnv|vi\.stubGlobal|useFakeTimers|process\.chdir/;
const NOCK = /from "nock"/;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "fixtures" ? [] : testFiles(file);
    return entry.name.endsWith(".ts") ? [file] : [];
  });
}

/** Whether a file, or a test-side file it imports (helpers, supports), has text that `pattern` matches. */
function uses(pattern: RegExp, file: string, seen = new Set<string>()): boolean {
  if (seen.has(file) || !existsSync(file)) return false;
  seen.add(file);
  const text = readFileSync(file, "utf8");
  if (pattern.test(text)) return true;
  return [...text.matchAll(/from "(\.{1,2}\/[^"]+)\.js"/g)].some(([, specifier]) => {
    const target = path.resolve(path.dirname(file), `${specifier}.ts`);
    return target.includes(`${path.sep}test${path.sep}`) && uses(pattern, target, seen);
  });
}

const root = path.dirname(new URL(import.meta.url).pathname);
const files = testFiles(path.join(root, "test")).filter((file) => file.endsWith(".test.ts"));
const relative = (file: string) => path.relative(root, file).split(path.sep).join("/");
const isolated = files.filter((file) => file.includes(`${path.sep}e2e${path.sep}`) || uses(ISOLATED, file));
const withNock = files.filter((file) => !isolated.includes(file) && uses(NOCK, file));

export default defineConfig({
  test: {
    // Limits that only a hang reaches (test/helpers/patience.ts): no test fails because the machine is slow.
    testTimeout: TEST_LIMIT_MS,
    hookTimeout: TEST_LIMIT_MS,
    expect: { poll: { timeout: PATIENCE_MS } },
    pool: "forks",
    // Most tests wait on git, bubblewrap, Redis, local servers and child processes rather than the CPU: on two cores,
    // three forks took the suite from 8½ to 3½ minutes; with four, the two cores were still a sixth idle (CPU 1.7 of 2),
    // and six took vitest from 342 s to 295 s on a quiet machine. BLUEPRINT_TEST_WORKERS sets another count.
    maxWorkers: Number(process.env.BLUEPRINT_TEST_WORKERS ?? 6),
    // Each project's longest files first (test/helpers/sequencer.ts).
    sequence: { sequencer: LongestFirst },
    env: { LOG_LEVEL: "silent" },
    // One temporary directory for the whole run, TMPDIR for every test process and what it starts, removed at the end.
    globalSetup: ["test/helpers/temp-root.ts"],
    // A passing run prints a line of dots and the summary (a failing test is named, with its output and
    // error): console output of passing tests is dropped. `--reporter=default` lists every file instead.
    silent: "passed-only",
    slowTestThreshold: 10_000,
    // BLUEPRINT_TEST_REPORT=file.json also writes each file's and test's duration there (for the slowest files).
    reporters: process.env.BLUEPRINT_TEST_REPORT
      ? ["dot", ["json", { outputFile: process.env.BLUEPRINT_TEST_REPORT }]]
      : ["dot"],
    projects: [
      {
        extends: true,
        test: {
          name: "isolated",
          include: isolated.map(relative),
          setupFiles: ["test/helpers/github-requests-documented.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "nock",
          include: withNock.map(relative),
          isolate: false,
          setupFiles: ["test/helpers/nock-between-files.ts", "test/helpers/github-requests-documented.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "shared",
          include: ["test/**/*.test.ts"],
          exclude: [...isolated, ...withNock].map(relative),
          isolate: false,
        },
      },
    ],
  },
});
