import { execFileSync } from "node:child_process";
import { closeSync, constants, openSync } from "node:fs";
import path from "node:path";

/** A named pipe in `dir`, as any command the agent runs could leave in the workspace. */
export function makeFifo(dir: string, name: string): string {
  const fifo = path.join(dir, name);
  execFileSync("mkfifo", [fifo]);
  return fifo;
}

/**
 * Frees whatever a failing test left blocked on the pipe (a reader waiting for a writer or the
 * reverse), so the test process can still exit. Never blocks itself.
 */
export function releaseFifo(fifo: string): void {
  for (const flags of [constants.O_WRONLY | constants.O_NONBLOCK, constants.O_RDONLY | constants.O_NONBLOCK]) {
    try {
      closeSync(openSync(fifo, flags));
    } catch {
      // no one on the other side, or the pipe is gone
    }
  }
}
