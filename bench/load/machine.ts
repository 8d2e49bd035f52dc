// What the machine did meanwhile (Linux /proc): CPU by process, the intake's threads, and the app's
// event-loop delay as bench/support/loop-probe.mjs measured it from inside.
import { readdirSync, readFileSync } from "node:fs";
import { childrenOf } from "../../test/e2e/support/processes.js";
import { safeJson, seconds } from "./format.js";

/**
 * What bench/support/loop-probe.mjs writes: the app's event-loop delay, and its stalls over 50 ms (wall-clock start,
 * length).
 */
export interface AppLoop {
  p50: number;
  p99: number;
  max: number;
  stalls?: Array<{ at: number; ms: number }>;
}

export function readAppLoop(probeFile: string): AppLoop | null {
  try {
    return safeJson(readFileSync(probeFile, "utf8")) as AppLoop | null;
  } catch {
    return null;
  }
}

/** CPU used (ms, Linux /proc): by a process, by its children it has waited for, and by the whole machine. */
export interface CpuSnapshot {
  app: number;
  appChildren: number;
  /** The app's processes below it (local: the local worker and its job runner), with the git they ran. */
  workers: number;
  bench: number;
  benchChildren: number;
  machine: number;
}
export type CpuDelta = CpuSnapshot & { other: number };

export function cpuSnapshot(appPid: number): CpuSnapshot | null {
  try {
    const tick = 1000 / 100; // USER_HZ
    const proc = (pid: number | "self") => {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8")
        .replace(/^.*\) /, "")
        .split(" ");
      const at = (n: number) => Number(fields[n - 3]) * tick; // field n of proc(5), 1-based
      return { own: at(14) + at(15), children: at(16) + at(17) };
    };
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = (
      readFileSync("/proc/stat", "utf8").split("\n")[0] ?? ""
    )
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const app = proc(appPid);
    const bench = proc("self");
    const workers = descendantsOf(appPid).reduce((sum, pid) => {
      try {
        const used = proc(pid);
        return sum + used.own + used.children;
      } catch {
        return sum; // gone meanwhile
      }
    }, 0);
    return {
      app: app.own,
      appChildren: app.children,
      workers,
      bench: bench.own,
      benchChildren: bench.children,
      machine: (user + nice + system + irq + softirq + steal) * tick,
    };
  } catch {
    return null;
  }
}

/** Every process below `pid` (children, their children, …), from /proc. */
function descendantsOf(pid: number): number[] {
  const found: number[] = [];
  for (let queue = [pid], next = queue.shift(); next !== undefined; next = queue.shift()) {
    const below = childrenOf(next).map((child) => child.pid);
    found.push(...below);
    queue.push(...below);
  }
  return found;
}

export function cpuDelta(before: CpuSnapshot | null, after: CpuSnapshot | null): CpuDelta | null {
  if (!before || !after) return null;
  const d = (key: keyof CpuSnapshot) => after[key] - before[key];
  return {
    app: d("app"),
    appChildren: d("appChildren"),
    workers: d("workers"),
    bench: d("bench"),
    benchChildren: d("benchChildren"),
    machine: d("machine"),
    other: Math.max(0, d("machine") - d("app") - d("appChildren") - d("workers") - d("bench") - d("benchChildren")),
  };
}

export function cpuLine(cpu: CpuDelta): string {
  const s = seconds;
  return (
    `app (intake) ${s(cpu.app)}; its workers (local: local worker, job runner and their git) ${s(cpu.workers)}; bench process (double, sender, model) ${s(cpu.bench)} + the double's git ${s(cpu.benchChildren)}; ` +
    `other processes on the machine ${s(cpu.other)}`
  );
}

/** A thread's scheduler figures (Linux schedstat), in ms: time on a core, and time ready but waiting for one. */
export type ThreadTimes = { onCpu: number; waiting: number };

/**
 * Every thread of a process, by thread id (its event loop's is the pid): V8's garbage-collection and
 * compiler threads too.
 */
export function threadTimes(pid: number): Map<string, ThreadTimes> {
  const threads = new Map<string, ThreadTimes>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const [onCpu = "0", waiting = "0"] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").trim().split(" ");
      threads.set(tid, { onCpu: Number(onCpu) / 1e6, waiting: Number(waiting) / 1e6 });
    }
  } catch {
    // Gone meanwhile, or not Linux: no figures.
  }
  return threads;
}

/**
 * The intake's threads since `before`: its event loop's (thread id = pid), and the others that ran
 * at least 5 ms, busiest first.
 */
export function intakeThreadsSince(
  pid: number,
  before: Map<string, ThreadTimes>,
): { loop: ThreadTimes | null; others: ThreadTimes[] } {
  const threads = new Map(
    [...threadTimes(pid)].map(([tid, after]) => [
      tid,
      { onCpu: after.onCpu - (before.get(tid)?.onCpu ?? 0), waiting: after.waiting - (before.get(tid)?.waiting ?? 0) },
    ]),
  );
  const loop = threads.get(String(pid)) ?? null;
  threads.delete(String(pid));
  return {
    loop,
    others: [...threads.values()].filter((thread) => thread.onCpu >= 5).sort((a, b) => b.onCpu - a.onCpu),
  };
}
