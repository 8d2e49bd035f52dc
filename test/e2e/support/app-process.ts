import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../../helpers/free-port.js";
import { PATIENCE_MS } from "../../helpers/patience.js";

export { freePort };

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const BUILT_ENTRY = path.join(PROJECT_ROOT, "lib", "index.js");

/**
 * The node flags `npm start` gives the app (the start script of `root`'s package.json): the app here runs as it does
 * there.
 */
function startFlags(root: string): string[] {
  return (
    JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { scripts: { start: string } }
  ).scripts.start
    .split(" ")
    .filter((word) => word.startsWith("--"));
}

export interface AppProcess {
  /** `http://127.0.0.1:<port>` */
  url: string;
  webhookUrl: string;
  pid: number;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Stops the whole process group; resolves when the process is gone. */
  stop(): Promise<void>;
}

/**
 * Fails with a clear message when the app has not been compiled (`npm run build`, which `npm test` runs first). `root`:
 * another checkout of the app (the load bench's baseline), this one by default.
 */
export function requireBuiltApp(root = PROJECT_ROOT): void {
  const entry = path.join(root, "lib", "index.js");
  if (!existsSync(entry)) {
    throw new Error(
      `${path.relative(PROJECT_ROOT, entry)} is missing: the end-to-end tests run the compiled app. Run \`npm run build\` first (\`npm test\` does).`,
    );
  }
}

/**
 * `probot run ./lib/index.js` as `npm start` runs it (with its node flags), in its own process group, with only the
 * environment given (plus PATH): nothing leaks in from the test runner. `options.root`: the checkout it runs from, with
 * its own build, node_modules and package.json (this one by default; the load bench's baseline is another).
 */
export async function startAppProcess(
  env: Record<string, string>,
  options: { root?: string } = {},
): Promise<AppProcess> {
  const root = options.root ?? PROJECT_ROOT;
  requireBuiltApp(root);
  const port = await freePort();
  const probot = path.join(root, "node_modules", "probot", "bin", "probot.js");
  const child = spawn(process.execPath, [...startFlags(root), probot, "run", "./lib/index.js"], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOST: "127.0.0.1",
      PORT: String(port),
      LOG_FORMAT: "json",
      ...env,
    },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 128 : null))),
  );
  let gone = false;
  void exited.then(() => (gone = true));

  // Should the test runner exit without stopping the app, the app's process group goes with it.
  const killOnExit = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  };
  process.once("exit", killOnExit);

  const url = `http://127.0.0.1:${port}`;
  const app: AppProcess = {
    url,
    webhookUrl: `${url}/api/github/webhooks`,
    pid: child.pid ?? -1,
    output: () => output,
    stop: async () => {
      await stopGroup(child, exited);
      process.removeListener("exit", killOnExit);
    },
  };
  const deadline = Date.now() + PATIENCE_MS;
  while (Date.now() < deadline) {
    if (gone) throw new Error(`the app exited before it was ready:\n${output}`);
    const healthy = await fetch(`${url}/healthz`).then(
      (response) => response.ok,
      () => false,
    );
    if (healthy) return app;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await app.stop();
  throw new Error(`the app did not answer ${url}/healthz within ${PATIENCE_MS} ms:\n${output}`);
}

async function stopGroup(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.pid === undefined) return;
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      process.kill(-(child.pid as number), signal);
    } catch {
      // The group is already gone.
    }
  };
  if (child.exitCode !== null || child.signalCode !== null) {
    // The app is gone; anything it left running in its group goes with it.
    signalGroup("SIGKILL");
    return;
  }
  signalGroup("SIGTERM");
  const stopped = await Promise.race([
    exited.then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5_000)),
  ]);
  if (!stopped) {
    signalGroup("SIGKILL");
    await exited;
  }
}
