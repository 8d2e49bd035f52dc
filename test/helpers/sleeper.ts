import { randomInt } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { PATIENCE_MS, realPause } from "./patience.js";

/**
 * A command that sleeps for about an hour, told apart from every other process on the machine (other tests', other
 * runs') by its fraction of a second: `isRunning` then says when the agent's command has started, so a test acts
 * on that event rather than after a delay that a slow machine can outlast.
 */
export function sleeper(): string {
  return `sleep 3600.${randomInt(100_000, 1_000_000)}`;
}

/** Whether a process on this machine runs `command` (its arguments joined by spaces), read from /proc. */
export function isRunning(command: string): boolean {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .some((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ") === command;
      } catch {
        return false; // the process ended meanwhile
      }
    });
}

/**
 * Resolves once `command` runs (see `isRunning`), polling on the real clock for up to PATIENCE_MS: a test's fake clock
 * stays where it is.
 */
export async function untilRunning(command: string): Promise<void> {
  const pauseMs = 20;
  for (let waited = 0; !isRunning(command); waited += pauseMs) {
    if (waited >= PATIENCE_MS) throw new Error(`\`${command}\` did not start within ${PATIENCE_MS / 1000} s`);
    await realPause(pauseMs);
  }
}
