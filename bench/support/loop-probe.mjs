// Preloaded into the app by bench/load/processes.ts (NODE_OPTIONS=--import …): the app's event-loop delay,
// written to $BENCH_LOOP_PROBE_FILE every second and at exit, with the stalls over 50 ms (when each
// began, wall clock, and how long it lasted), so a slow webhook can be matched to what held the loop.
// SIGUSR2 starts afresh (the bench sends it when the first webhook goes out). Does nothing without the variable.
import { writeFile, writeFileSync } from "node:fs";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";

const file = process.env.BENCH_LOOP_PROBE_FILE;
const STALL_MS = 50;
const TICK_MS = 10;
// The app's own process only: the local worker it forks inherits NODE_OPTIONS, and has an IPC channel.
if (file && !process.send) {
  let histogram = monitorEventLoopDelay({ resolution: 10 });
  let stalls = [];
  histogram.enable();
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    const late = now - last - TICK_MS;
    if (late > STALL_MS && stalls.length < 200)
      stalls.push({ at: Math.round(performance.timeOrigin + last + TICK_MS), ms: Math.round(late) });
    last = now;
  }, TICK_MS).unref();
  const figures = () => {
    const ms = (ns) => Math.round(ns / 1e5) / 10;
    return JSON.stringify({
      p50: ms(histogram.percentile(50)),
      p99: ms(histogram.percentile(99)),
      max: ms(histogram.max),
      count: histogram.count,
      stalls,
    });
  };
  // Written asynchronously while the app runs (a synchronous write here would itself stall the loop it measures).
  const dump = () => writeFile(file, figures(), () => undefined);
  process.on("SIGUSR2", () => {
    histogram.disable();
    histogram = monitorEventLoopDelay({ resolution: 10 });
    histogram.enable();
    stalls = [];
  });
  setInterval(dump, 1000).unref();
  process.on("exit", () => writeFileSync(file, figures()));
}
