import { readdirSync, readFileSync } from "node:fs";

/** The processes whose parent is `pid`, with their command lines (read from /proc). */
export function childrenOf(pid: number): Array<{ pid: number; cmdline: string }> {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        return parent === pid
          ? [{ pid: Number(entry), cmdline: readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ") }]
          : [];
      } catch {
        return [];
      }
    });
}

/** The local worker a lone `npm start` (`pid`) forked, if it runs. */
export const localWorkerOf = (pid: number): { pid: number; cmdline: string } | undefined =>
  childrenOf(pid).find((child) => child.cmdline.includes("local-worker.js"));

/** The job runner a worker (`pid`) forked, if it runs. */
export const jobRunnerOf = (pid: number): { pid: number; cmdline: string } | undefined =>
  childrenOf(pid).find((child) => child.cmdline.includes("job-runner.js"));

/** The process's nice value (field 19 of /proc/<pid>/stat). */
export function niceOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
}

/** The names of the process's environment variables. */
export const environmentOf = (pid: number): string[] =>
  readFileSync(`/proc/${pid}/environ`, "utf8")
    .split("\0")
    .map((entry) => entry.slice(0, entry.indexOf("=")));

/** Whether the process still runs (a zombie waiting for its parent to reap it does not). */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !["Z", "X"].includes(stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3));
  } catch {
    return false;
  }
}
