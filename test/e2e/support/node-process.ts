import { spawn } from "node:child_process";
import { PATIENCE_MS } from "../../helpers/patience.js";

export interface NodeRun {
  /** The exit code; 128 + n would be a signal, reported as `signal` instead (code null). */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * `node <args…>` (this very Node, process.execPath) with exactly the environment given, in its
 * own process group. Past PATIENCE_MS the whole group is killed, so no child (git, a command the
 * agent ran) outlives the test.
 */
export function runNode(args: string[], options: { cwd: string; env: Record<string, string> }): Promise<NodeRun> {
  const child = spawn(process.execPath, args, {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const killGroup = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    } catch {
      // The group is already gone.
    }
  };
  process.once("exit", killGroup);
  const timer = setTimeout(() => {
    stderr += `\n[runNode] killed after ${PATIENCE_MS} ms\n`;
    killGroup();
  }, PATIENCE_MS);
  return new Promise<NodeRun>((resolve, reject) => {
    child.on("error", (error) => {
      clearTimeout(timer);
      process.removeListener("exit", killGroup);
      reject(error);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      process.removeListener("exit", killGroup);
      // Anything the process left running in its group goes with it.
      killGroup();
      resolve({ code, signal, stdout, stderr });
    });
  });
}
