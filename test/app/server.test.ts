import { createHmac } from "node:crypto";
import type { AddressInfo } from "node:net";
import nock from "nock";
import { Probot, ProbotOctokit, Server } from "probot";
import { afterEach, expect, it } from "vitest";
import { createBlueprintApp } from "../../src/index.js";
import { loadEnv } from "../../src/config/env.js";
import { APP_ID, githubDouble } from "../helpers/github-double.js";
import { commentPayload, testPrivateKey } from "../helpers/app.js";
import { freePort } from "../helpers/free-port.js";
import { tempDir } from "../helpers/git-repo.js";

const SECRET = "server-test-secret";
let server: Server | null = null;

afterEach(async () => {
  await server?.stop();
  nock.cleanAll();
  nock.enableNetConnect();
});

it("serves signed webhooks and /healthz over HTTP, and rejects a bad signature", async () => {
  nock.disableNetConnect();
  nock.enableNetConnect("127.0.0.1");
  const github = githubDouble({ permissions: { maintainer: "write" } });
  let blueprint: ReturnType<typeof createBlueprintApp> | undefined;
  const quiet = new Probot({ appId: APP_ID, privateKey: testPrivateKey(), logLevel: "silent" as "fatal" });
  // Probot makes its logger in ready(); before that `quiet.log` is null and the server would log at info.
  await quiet.ready();
  server = new Server({
    log: quiet.log,
    // Probot's Server reads port 0 as "unset" and takes 3000, which another test may hold.
    port: await freePort(),
    host: "127.0.0.1",
    Probot: Probot.defaults({
      appId: APP_ID,
      privateKey: testPrivateKey(),
      secret: SECRET,
      logLevel: "fatal",
      Octokit: ProbotOctokit.defaults((options: Record<string, unknown>) => ({
        ...options,
        retry: { enabled: false },
        throttle: { enabled: false },
      })),
    }),
  });
  await server.load((app, options) => {
    blueprint = createBlueprintApp(app, options, {
      env: loadEnv({ APP_ID: String(APP_ID), WEBHOOK_SECRET: SECRET, BLUEPRINT_WORKDIR: tempDir() }),
    });
  });
  const http = await server.start();
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

  const health = await fetch(`${base}/healthz`);
  expect(health.status).toBe(200);
  expect(await health.json()).toMatchObject({
    status: "ok",
    queue: { backend: "local", waiting: 0, running: 0, workers: 1 },
  });

  const body = JSON.stringify(commentPayload({ body: "/help", cloneUrl: "file:///nowhere" }));
  const send = (signature: string) =>
    fetch(`${base}/api/github/webhooks`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "issue_comment",
        "x-github-delivery": `d-${signature.slice(-6)}`,
        "x-hub-signature-256": signature,
      },
      body,
    });
  const forged = await send("sha256=" + "0".repeat(64));
  expect(forged.status).toBeGreaterThanOrEqual(400);

  const signed = await send("sha256=" + createHmac("sha256", SECRET).update(body).digest("hex"));
  expect(signed.status).toBe(200);
  await new Promise((resolve) => setTimeout(resolve, 50));
  await blueprint?.idle();
  expect(github.botComments().map((c) => c.body.split("\n")[0])).toEqual(["### Blueprint commands"]);

  // Prometheus text: the webhook counted as accepted, the /help job's queue wait observed.
  const metrics = await fetch(`${base}/metrics`);
  expect(metrics.status).toBe(200);
  expect(metrics.headers.get("content-type")).toMatch(/^text\/plain/);
  const text = await metrics.text();
  expect(text).toContain('blueprint_webhooks_total{event="issue_comment",outcome="accepted"} 1');
  expect(text).toMatch(/blueprint_queue_wait_seconds_count\{phase="triage"\} 1/);
});
