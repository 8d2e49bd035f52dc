import { spawn } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { testPrivateKey } from "../helpers/app.js";
import { tempDir } from "../helpers/git-repo.js";
import { pathWithout } from "../helpers/no-bubblewrap.js";
import { PATIENCE_MS } from "../helpers/patience.js";
import { freePort, PROJECT_ROOT, requireBuiltApp } from "./support/app-process.js";
import { runNode, type NodeRun } from "./support/node-process.js";

/**
 * `npm start` and `npm run worker` on a machine where bubblewrap is missing or cannot build the sandbox
 * (issue #28, point 5): one plain message and exit 1, before anything listens or is forked.
 */

const START = path.join(PROJECT_ROOT, "lib", "start.js");
const WORKER = path.join(PROJECT_ROOT, "lib", "worker.js");
const running: Array<() => void> = [];

afterEach(() => {
  for (const stop of running.splice(0)) stop();
});

/** The App's credentials (a throwaway key), so that `npm start` runs the App rather than setup mode. */
function appCredentials(): Record<string, string> {
  return { APP_ID: "1", PRIVATE_KEY: testPrivateKey(), WEBHOOK_SECRET: "fail-closed-webhook-secret" };
}

/**
 * Runs an entry to its end while knocking on its port all along: whether anything ever accepted a
 * connection there. (The run ends by itself; runNode's kill after PATIENCE_MS would show as a signal and fail
 * the test.)
 */
async function runWatchingPort(
  entry: string,
  port: number,
  env: Record<string, string>,
): Promise<NodeRun & { portOpened: boolean }> {
  requireBuiltApp();
  let done = false;
  let portOpened = false;
  const run = runNode([entry], {
    cwd: tempDir("fail-closed-cwd-"),
    env: { HOST: "127.0.0.1", PORT: String(port), ...env },
  }).finally(() => (done = true));
  while (!done) {
    if (await accepts(port)) portOpened = true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { ...(await run), portOpened };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** What every refusal says: what is wrong, what to install, and what the way around it would expose. */
function expectOnePlainRefusal(run: NodeRun & { portOpened: boolean }, problem: RegExp): void {
  expect(run.signal).toBeNull();
  expect(run.code).toBe(1);
  expect(run.portOpened).toBe(false);
  // Nothing logged: no server said it listens, no worker or job runner started (each logs as it starts).
  expect(run.stdout).toBe("");
  const lines = run.stderr.split("\n").filter(Boolean);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^blueprint: agent commands need the bubblewrap sandbox, but /);
  expect(lines[0]).toMatch(problem);
  expect(lines[0]).toContain("apt-get install bubblewrap");
  expect(lines[0]).toMatch(
    /set BLUEPRINT_SANDBOX=none: they then run as this process's user and can read everything it can/,
  );
  expect(run.stderr).not.toMatch(/\n\s+at /);
}

const NOT_INSTALLED = /bubblewrap \(`bwrap`\) is not installed \(not on PATH\)/;
const CANNOT_START = /bubblewrap cannot build the sandbox here \(.*No permissions to create new namespace\)/;

describe("without a working bubblewrap, the App and the worker refuse to start (fail closed)", () => {
  it.each([
    ["unset (the default)", {}, "missing", NOT_INSTALLED],
    ["auto (an .env copied from an older .env.example)", { BLUEPRINT_SANDBOX: "auto" }, "broken", CANNOT_START],
    ["bwrap", { BLUEPRINT_SANDBOX: "bwrap" }, "missing", NOT_INSTALLED],
  ] as const)(
    "npm start, BLUEPRINT_SANDBOX %s, bubblewrap %s: one message, exit 1, the port never opened",
    async (_, sandbox, kind, problem) => {
      const run = await runWatchingPort(START, await freePort(), {
        PATH: pathWithout(kind),
        ...appCredentials(),
        ...sandbox,
      });
      expectOnePlainRefusal(run, problem);
    },
  );

  it.each([
    ["missing", NOT_INSTALLED],
    ["broken", CANNOT_START],
  ] as const)(
    "npm run worker, bubblewrap %s: one message, exit 1, before Redis, its job runner or /healthz",
    async (kind, problem) => {
      // Nothing listens at this Redis address: a worker that went on would retry it for ever, and be killed.
      const run = await runWatchingPort(WORKER, await freePort(), {
        PATH: pathWithout(kind),
        REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
        BLUEPRINT_STATE_SECRET: "fail-closed-state-secret",
        BLUEPRINT_SANDBOX: "auto",
      });
      expectOnePlainRefusal(run, problem);
    },
  );

  it("control: BLUEPRINT_SANDBOX=none on the same machine starts, and says loudly what it gives up", async () => {
    const app = await startUntilHealthy({
      PATH: pathWithout("missing"),
      ...appCredentials(),
      BLUEPRINT_SANDBOX: "none",
    });
    expect(await (await fetch(`${app.url}/healthz`)).json()).toMatchObject({ status: "ok" });
    await waitFor(() => app.output().includes("WITHOUT a sandbox"));
    expect(app.output()).toMatch(
      /BLUEPRINT_SANDBOX=none: agent commands run WITHOUT a sandbox, as this process's user/,
    );
  });

  it("setup mode still serves the registration page, and says the App will not start here until bubblewrap works", async () => {
    const setup = await startUntilHealthy({ PATH: pathWithout("missing"), NO_SMEE_SETUP: "true" });
    // /healthz can answer before the warning's line reaches the pipe: wait for it, then read it whole.
    await waitFor(() => setup.output().includes("the App will not start with its credentials"));
    expect(setup.output()).toMatch(
      /WARN.*the App will not start with its credentials until this is fixed: agent commands need the bubblewrap sandbox, but bubblewrap \(`bwrap`\) is not installed.*apt-get install bubblewrap/,
    );
    const page = await (await fetch(`${setup.url}/`)).text();
    expect(page).toContain("Before it can run jobs");
    expect(page).toContain("apt-get install bubblewrap");
    expect(page).toContain('href="/probot"');
  });
});

/** `node lib/start.js` in a fresh directory, until /healthz answers (stopped after the test). */
async function startUntilHealthy(env: Record<string, string>): Promise<{ url: string; output(): string }> {
  requireBuiltApp();
  const port = await freePort();
  const child = spawn(process.execPath, [START], {
    cwd: tempDir("fail-closed-cwd-"),
    env: { HOST: "127.0.0.1", PORT: String(port), ...env },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.push(() => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => {
    if (child.exitCode !== null) throw new Error(`start.js exited:\n${output}`);
    return fetch(`${url}/healthz`).then(
      (response) => response.ok,
      () => false,
    );
  });
  return { url, output: () => output };
}

async function waitFor(condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + PATIENCE_MS;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
