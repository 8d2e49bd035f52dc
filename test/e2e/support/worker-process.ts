import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { PATIENCE_MS } from "../../helpers/patience.js";
import { PROJECT_ROOT, requireBuiltApp } from "./app-process.js";

export interface WorkerProcess {
  pid: number;
  output(): string;
  /** The environment the running process holds (from /proc). */
  environment(): Record<string, string>;
  /** SIGKILL to the whole group: a worker dying mid-job, with no chance to clean up. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * `npm run worker` as it runs (`node lib/worker.js`), in its own process group, with only the environment given.
 * `root`: the checkout it runs from (this one by default; the load bench's baseline is another).
 */
export async function startWorkerProcess(env: Record<string, string>, root = PROJECT_ROOT): Promise<WorkerProcess> {
  requireBuiltApp(root);
  const child = spawn(process.execPath, [path.join(root, "lib", "worker.js")], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    } catch {
      // Already gone.
    }
  };
  const killOnExit = () => signalGroup("SIGKILL");
  process.once("exit", killOnExit);
  const gone = () => child.exitCode !== null || child.signalCode !== null;

  const deadline = Date.now() + PATIENCE_MS;
  while (!output.includes("worker ready")) {
    if (gone() || Date.now() > deadline) {
      signalGroup("SIGKILL");
      throw new Error(`the worker did not start:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    pid: child.pid ?? -1,
    output: () => output,
    environment: () =>
      Object.fromEntries(
        readFileSync(`/proc/${child.pid}/environ`, "utf8")
          .split("\0")
          .filter(Boolean)
          .map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]),
      ),
    async kill() {
      signalGroup("SIGKILL");
      await exited;
      process.removeListener("exit", killOnExit);
    },
    async stop() {
      if (!gone()) {
        signalGroup("SIGTERM");
        const stopped = await Promise.race([
          exited.then(() => true),
          new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 8_000)),
        ]);
        if (!stopped) signalGroup("SIGKILL");
      }
      await exited;
      signalGroup("SIGKILL");
      process.removeListener("exit", killOnExit);
    },
  };
}
