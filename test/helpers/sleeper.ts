import { randomInt } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";

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
