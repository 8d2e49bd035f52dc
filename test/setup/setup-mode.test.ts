import { spawn } from "node:child_process";
import { copyFileSync, existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { testPrivateKey } from "../helpers/app.js";
import { tempDir } from "../helpers/git-repo.js";
import { freePort, PROJECT_ROOT, requireBuiltApp } from "../e2e/support/app-process.js";
import { PATIENCE_MS } from "../helpers/patience.js";

/** `npm start` without credentials, as a new user meets it (issue #15, points 1 and 6). */

const START = path.join(PROJECT_ROOT, "lib", "start.js");
const running: Array<() => void> = [];

afterEach(() => {
  for (const stop of running.splice(0)) stop();
});

/** `node lib/start.js` (what `npm start` runs after building) in a fresh directory holding app.yml and package.json. */
async function startSetupMode(env: Record<string, string> = {}, dotEnv = "") {
  requireBuiltApp();
  const cwd = tempDir("blueprint-setup-");
  for (const file of ["app.yml", "package.json"]) copyFileSync(path.join(PROJECT_ROOT, file), path.join(cwd, file));
  if (dotEnv) writeFileSync(path.join(cwd, ".env"), dotEnv);
  const port = await freePort();
  const child = spawn(process.execPath, [START], {
    cwd,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOST: "127.0.0.1",
      PORT: String(port),
      NO_SMEE_SETUP: "true",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.push(() => child.kill("SIGKILL"));
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + PATIENCE_MS;
  while (
    !(await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`setup mode did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const manifestHookUrl = async () => {
    const page = await (await fetch(`${url}/probot`)).text();
    return /&quot;hook_attributes&quot;:\{&quot;url&quot;:&quot;([^&]+)&quot;|"hook_attributes":\{"url":"([^"]+)"/
      .exec(page)
      ?.slice(1)
      .find(Boolean);
  };
  return { url, cwd, output: () => output, manifestHookUrl };
}

describe("setup mode (npm start with no App credentials)", () => {
  it("names the unreachable webhook URL in the start-up log and on the setup page, and answers /healthz", async () => {
    const setup = await startSetupMode();
    expect(setup.output()).toMatch(
      /WARN.*No WEBHOOK_PROXY_URL or BLUEPRINT_PUBLIC_URL is set: a GitHub App registered now would send its webhooks to http:\/\/localhost:\d+\/, which GitHub cannot reach/,
    );
    const page = await (await fetch(`${setup.url}/`)).text();
    expect(page).toContain("GitHub cannot reach this server yet");
    expect(page).toContain("https://smee.io/new");
    expect(page).toContain('href="/probot"');

    const health = await fetch(`${setup.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: "setup", webhooks: false });
    // Probot's registration flow is still there, behind Blueprint's first page.
    expect(await setup.manifestHookUrl()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
  });

  it("takes the public address from the setup page and registers the App with webhooks there", async () => {
    const setup = await startSetupMode();
    const refused = await fetch(`${setup.url}/blueprint/public-url?url=${encodeURIComponent("ftp://example.com")}`);
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("not an http(s) address");

    const taken = await fetch(
      `${setup.url}/blueprint/public-url?url=${encodeURIComponent("https://blueprint.example.com/")}`,
      { redirect: "manual" },
    );
    expect(taken.status).toBe(303);
    expect(await (await fetch(`${setup.url}/`)).text()).toContain(
      "GitHub will send webhooks to <code>https://blueprint.example.com/api/github/webhooks</code>",
    );
    expect(await setup.manifestHookUrl()).toBe("https://blueprint.example.com/api/github/webhooks");
    // Nothing is written until GitHub hands back the App's credentials.
    expect(existsSync(path.join(setup.cwd, ".env"))).toBe(false);
  });

  it("uses BLUEPRINT_PUBLIC_URL or a WEBHOOK_PROXY_URL relay without warning", async () => {
    const publicUrl = await startSetupMode({ BLUEPRINT_PUBLIC_URL: "https://bp.example.org" });
    expect(await publicUrl.manifestHookUrl()).toBe("https://bp.example.org/api/github/webhooks");
    expect(publicUrl.output()).toContain("will send webhooks to https://bp.example.org/api/github/webhooks");
    expect(publicUrl.output()).not.toContain("cannot reach");

    const relay = await startSetupMode({ WEBHOOK_PROXY_URL: "https://smee.io/abc123" });
    expect(await relay.manifestHookUrl()).toBe("https://smee.io/abc123");
    expect(relay.output()).not.toContain("cannot reach");
  });

  it("is plain `probot run ./lib/index.js` once .env holds the App's credentials", async () => {
    const key = testPrivateKey().replace(/\n/g, "\\n");
    const app = await startSetupMode(
      { BLUEPRINT_WORKDIR: tempDir() },
      `APP_ID=1\nPRIVATE_KEY="${key}"\nWEBHOOK_SECRET=first-hour-secret\n`,
    );
    const health = (await (await fetch(`${app.url}/healthz`)).json()) as { status?: string };
    expect(health.status).not.toBe("setup");
    // The App's webhook endpoint verifies signatures; setup mode has none (404).
    const unsigned = await fetch(`${app.url}/api/github/webhooks`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "ping",
        "x-github-delivery": "d-1",
        "x-hub-signature-256": "sha256=00",
      },
      body: "{}",
    });
    expect(unsigned.status).toBe(400);
    expect(app.output()).not.toContain("cannot reach");
  });
});
