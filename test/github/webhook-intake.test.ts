import { createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Probot } from "probot";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { webhookIntake, type VerifiedDelivery } from "../../src/github/webhook-intake.js";
import { testPrivateKey } from "../helpers/app.js";

const SECRET = "intake-test-secret";
const PATH = "/api/github/webhooks";

describe("the webhook route", () => {
  let server: http.Server;
  let base: string;
  let received: VerifiedDelivery[];
  let errors: unknown[];
  let failReceive: boolean;

  beforeEach(async () => {
    received = [];
    errors = [];
    failReceive = false;
    // Probot's own signature check, with its webhooks' secret.
    const probot = new Probot({ appId: 1, privateKey: testPrivateKey(), secret: SECRET, logLevel: "fatal" });
    const intake = webhookIntake({
      path: PATH,
      verify: (body, signature) => probot.webhooks.verify(body, signature),
      receive: async (delivery) => {
        if (failReceive) throw new Error("the queue is away");
        received.push(delivery);
      },
      fallback: async (_req, res) => {
        res.writeHead(418).end("fallback");
        return true;
      },
      log: { error: (fields: unknown) => void errors.push(fields), warn: () => {} } as never,
    });
    server = http.createServer((req, res) => void intake(req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => new Promise<void>((resolve) => server.close(() => resolve())));

  const sign = (body: string, secret = SECRET) => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
  const post = (body: string, headers: Record<string, string> = {}, path = PATH) =>
    fetch(`${base}${path}`, {
      method: "POST",
      body,
      headers: {
        "content-type": "application/json",
        "x-github-event": "issue_comment",
        "x-github-delivery": "d-1",
        "x-hub-signature-256": sign(body),
        ...headers,
      },
    });

  it("takes in a signed delivery: its id, event and parsed payload, answered 200 once received", async () => {
    const body = JSON.stringify({ action: "created", comment: { body: "/plan ✓ ünïcode" } });
    const response = await post(body, { "x-github-delivery": "abc-123" });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("ok\n");
    expect(received).toEqual([
      { id: "abc-123", name: "issue_comment", payload: { action: "created", comment: { body: "/plan ✓ ünïcode" } } },
    ]);
  });

  it("refuses a forged or altered delivery, and one that is not JSON, without taking anything in", async () => {
    const body = JSON.stringify({ action: "created" });
    const forged = await post(body, { "x-hub-signature-256": sign(body, "someone else's secret") });
    expect(forged.status).toBe(400);
    expect(await forged.json()).toEqual({ error: expect.stringContaining("signature does not match") });
    const altered = await post(body.replace("created", "deleted"), { "x-hub-signature-256": sign(body) });
    expect(altered.status).toBe(400);
    const notJson = await post("{ not json");
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toEqual({ error: expect.stringContaining("Invalid JSON") });
    expect(received).toEqual([]);
  });

  it("answers what is not a delivery as @octokit/webhooks does", async () => {
    const wrongType = await post("{}", { "content-type": "text/plain" });
    expect(wrongType.status).toBe(415);
    const missing = await fetch(`${base}${PATH}`, {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json", "x-github-event": "ping" },
    });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({ error: "Required headers missing: x-hub-signature-256, x-github-delivery" });
    const get = await fetch(`${base}${PATH}`);
    expect(get.status).toBe(404);
    expect(received).toEqual([]);
  });

  it("hands every other path to Probot's middleware, and a trailing slash or query still reaches the route", async () => {
    const other = await fetch(`${base}/probot`);
    expect(other.status).toBe(418);
    expect(await other.text()).toBe("fallback");
    const body = JSON.stringify({ zen: "Keep it logically awesome." });
    expect((await post(body, { "x-github-event": "ping" }, `${PATH}/?from=test`)).status).toBe(200);
    expect(received.map((delivery) => delivery.name)).toEqual(["ping"]);
  });

  it("answers 500 and logs when the delivery could not be taken in, so GitHub shows it failed", async () => {
    failReceive = true;
    const response = await post(JSON.stringify({ action: "created" }), { "x-github-delivery": "d-lost" });
    expect(response.status).toBe(500);
    expect(errors).toEqual([expect.objectContaining({ deliveryId: "d-lost", event: "issue_comment" })]);
  });
});
