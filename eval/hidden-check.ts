import { spawn } from "node:child_process";
import { cpSync } from "node:fs";
import path from "node:path";
import type { EvalTask } from "./task-suite.js";

export interface CheckResult {
  passed: boolean;
  exitCode: number | null;
  /** The end of what the check printed, for the report. */
  output: string;
  seconds: number;
}

const CHECK_TIMEOUT_MS = 60_000;
const OUTPUT_TAIL = 2_000;

/** Copies the task's hidden check into `tree` (as `.eval-check/`) and runs its command there with plain node. */
export async function runHiddenCheck(task: EvalTask, tree: string): Promise<CheckResult> {
  cpSync(task.checkDir, path.join(tree, ".eval-check"), { recursive: true });
  const [program = "node", ...args] = task.meta.check.command;
  const started = performance.now();
  // Only PATH: the checked code is whatever the agent wrote, so it gets no keys or tokens.
  const child = spawn(program === "node" ? process.execPath : program, args, { cwd: tree, env: { PATH: process.env.PATH ?? "" }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const keep = (chunk: Buffer) => (output = (output + chunk.toString("utf8")).slice(-OUTPUT_TAIL));
  child.stdout.on("data", keep);
  child.stderr.on("data", keep);
  const timer = setTimeout(() => child.kill("SIGKILL"), CHECK_TIMEOUT_MS);
  const exitCode = await new Promise<number | null>((resolve) => {
    child.on("error", (error) => {
      output += String(error);
      resolve(null);
    });
    child.on("close", (code) => resolve(code));
  });
  clearTimeout(timer);
  return { passed: exitCode === 0, exitCode, output: output.trim(), seconds: (performance.now() - started) / 1000 };
}
