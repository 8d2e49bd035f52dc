#!/usr/bin/env node
import { runCli } from "./cli/run.js";

/** The local CLI on a git checkout. Wiring only. */
let interrupts = 0;
let stopJob: (() => void) | null = null;
process.on("SIGINT", () => {
  interrupts += 1;
  if (interrupts > 1 || !stopJob) process.exit(130);
  stopJob();
});

process.exitCode = await runCli({
  argv: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  stdout: (text) => process.stdout.write(`${text}\n`),
  stderr: (text) => process.stderr.write(`${text}\n`),
  onInterrupt: (stop) => {
    stopJob = stop;
  },
});
