// Preloaded into the app by bench/load.ts (NODE_OPTIONS=--import …): the app's event-loop delay,
// written to $BENCH_LOOP_PROBE_FILE every second and at exit. SIGUSR2 starts a fresh histogram
// (the bench sends it when the first webhook goes out). Does nothing without the variable.
import { writeFile, writeFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";

const file = process.env.BENCH_LOOP_PROBE_FILE;
// The app's own process only: the local worker it forks inherits NODE_OPTIONS, and has an IPC channel.
if (file && !process.send) {
  let histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  const figures = () => {
    const ms = (ns) => Math.round(ns / 1e5) / 10;
    return JSON.stringify({ p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), max: ms(histogram.max), count: histogram.count });
  };
  // Written asynchronously while the app runs (a synchronous write here would itself stall the loop it measures).
  const dump = () => writeFile(file, figures(), () => undefined);
  process.on("SIGUSR2", () => {
    histogram.disable();
    histogram = monitorEventLoopDelay({ resolution: 10 });
    histogram.enable();
  });
  setInterval(dump, 1000).unref();
  process.on("exit", () => writeFileSync(file, figures()));
}
