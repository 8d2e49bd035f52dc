import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * vitest's global setup: the run's temporary files all go in one directory, removed when the run ends. The test
 * processes, and every process they start (apps, workers, git, the sandbox's helpers), inherit TMPDIR, so what
 * they leave behind in os.tmpdir() (about a gigabyte and 90,000 files per run) goes with it.
 */
export default function setup(): () => void {
  // Each of vitest.config.ts's projects runs the global setup: the first one makes the directory, the others use it.
  if (process.env.BLUEPRINT_SUITE_TMPDIR) return () => undefined;
  const root = mkdtempSync(path.join(os.tmpdir(), "blueprint-suite-"));
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = root;
  process.env.BLUEPRINT_SUITE_TMPDIR = root;
  return () => {
    delete process.env.BLUEPRINT_SUITE_TMPDIR;
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(root, { recursive: true, force: true, maxRetries: 3 });
  };
}
