// Starts stub-github.mjs and resolves with its base URL and a way to stop it.
import { fork } from "node:child_process";
import { once } from "node:events";

export async function startStub() {
  const child = fork(new URL("./stub-github.mjs", import.meta.url), { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const [{ port }] = await once(child, "message");
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () => {
      child.disconnect();
      return once(child, "exit");
    },
  };
}

/** CPU (user + system) this process used while `work` ran, in microseconds, and the wall time in ms. */
export async function cost(work) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await work();
  const used = process.cpuUsage(cpu);
  return { cpuUs: used.user + used.system, wallMs: performance.now() - started };
}
