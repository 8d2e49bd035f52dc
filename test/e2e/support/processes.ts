import { readdirSync, readFileSync } from "node:fs";

/** The processes whose parent is `pid`, with their command lines (read from /proc). */
export function childrenOf(pid: number): Array<{ pid: number; cmdline: string }> {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        return parent === pid ? [{ pid: Number(entry), cmdline: readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ") }] : [];
      } catch {
        return [];
      }
    });
}
