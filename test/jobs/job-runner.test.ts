import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import type { JobToken, RenewToken } from "../../src/credentials/index.js";
import { JobRunner } from "../../src/jobs/job-runner.js";
import type { Job } from "../../src/jobs/job.js";
import { HandOver, handOverTaken } from "../../src/shared/hand-over.js";
import { tempDir } from "../helpers/git-repo.js";

const log = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const job = { kind: "plan", deliveryId: "delivery-1" } as unknown as Job;
const token: JobToken = {
  token: "ghs_job-runner-test",
  expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
  permissions: {},
};

/**
 * A stand-in job runner speaking its part of protocol.ts: it records every message it gets, starts nothing,
 * and on an abort answers `done`, stopped for a hand-over exactly when the abort said it was one
 * (as the real runner's use case stops at its next safe point for a `HandOver`).
 */
function fakeRunner(options: { failFirstStart?: boolean; askForToken?: boolean; dieAfterFirstToken?: boolean } = {}): {
  entry: string;
  seen: () => Array<Record<string, unknown>>;
} {
  const dir = tempDir("job-runner-");
  const record = path.join(dir, "seen.jsonl");
  const entry = path.join(dir, "runner.mjs");
  const failed = path.join(dir, "failed-once");
  writeFileSync(record, "");
  writeFileSync(
    entry,
    `import { appendFileSync, existsSync, writeFileSync } from "node:fs";
    process.on("message", (raw) => {
      for (const message of Array.isArray(raw) ? raw : [raw]) {
        if (${options.failFirstStart === true} && message.type === "start" && !existsSync(${JSON.stringify(failed)})) {
          writeFileSync(${JSON.stringify(failed)}, "");
          process.exit(1);
        }
        appendFileSync(${JSON.stringify(record)}, JSON.stringify(message) + "\\n");
        if (message.type === "start") process.send({ type: "ready" });
        else if (message.type === "run" && ${options.askForToken === true}) process.send({ type: "token-request", id: message.id, deliveryId: message.job.deliveryId });
        else if (message.type === "token" && ${options.dieAfterFirstToken === true} && !existsSync(${JSON.stringify(failed)})) {
          writeFileSync(${JSON.stringify(failed)}, "");
          process.exit(1);
        }
        else if (message.type === "abort") process.send({ type: "done", id: message.id, handedOver: message.handOver === true });
      }
    });
    process.on("disconnect", () => process.exit(0));`,
  );
  const seen = () =>
    readFileSync(record, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { entry, seen };
}

let runner: JobRunner | undefined;
afterEach(() => runner?.stop());

/** A job handed to a stand-in runner, once the runner has it. */
async function jobInRunner(
  options: { failFirstStart?: boolean; askForToken?: boolean; dieAfterFirstToken?: boolean; renew?: RenewToken } = {},
) {
  const fake = fakeRunner(options);
  runner = new JobRunner({ entry: fake.entry, stateKey: "c3RhdGU=", log, niceness: 0 });
  const controller = new AbortController();
  const running = runner.run(job, token, controller.signal, options.renew);
  await expect.poll(() => fake.seen().some((message) => message.type === "run")).toBe(true);
  return { fake, controller, running };
}

it("a running job's request for a fresh token is answered by the worker's renewal, or with null when none came", async () => {
  const fresh: JobToken = { ...token, token: "ghs_renewed", expiresAt: new Date(Date.now() + 7_200_000).toISOString() };
  const renewed = await jobInRunner({ askForToken: true, renew: async () => fresh });
  await expect
    .poll(() => renewed.fake.seen().find((message) => message.type === "token"))
    .toEqual({ type: "token", id: 0, deliveryId: "delivery-1", token: fresh });
  renewed.controller.abort("stopped");
  await renewed.running;
  runner?.stop();

  const refused = await jobInRunner({
    askForToken: true,
    renew: async () => Promise.reject(new Error("no intake answered")),
  });
  await expect
    .poll(() => refused.fake.seen().find((message) => message.type === "token"))
    .toEqual({ type: "token", id: 0, deliveryId: "delivery-1", token: null });
  refused.controller.abort("stopped");
  await refused.running;
});

it("a fresh runner taking a job over after its runner died starts it with the token renewed for it, not the one it began with", async () => {
  const fresh: JobToken = { ...token, token: "ghs_renewed", expiresAt: new Date(Date.now() + 7_200_000).toISOString() };
  const { fake, controller, running } = await jobInRunner({
    askForToken: true,
    dieAfterFirstToken: true,
    renew: async () => fresh,
  });
  const runs = () => fake.seen().filter((message) => message.type === "run");
  await expect.poll(() => runs().length).toBe(2);
  expect(runs().map((message) => (message.token as JobToken).token)).toEqual([token.token, "ghs_renewed"]);
  controller.abort("stopped");
  await running;
});

it("a hand-over crosses to the runner and comes back: the worker sees the job stopped for it", async () => {
  const { fake, controller, running } = await jobInRunner();
  controller.abort(new HandOver());
  await running;
  expect(handOverTaken(controller.signal)).toBe(true);
  expect(fake.seen().find((message) => message.type === "abort")).toMatchObject({ handOver: true });
});

it("a /cancel is no hand-over on either side", async () => {
  const { fake, controller, running } = await jobInRunner();
  controller.abort("cancelled with /cancel");
  await running;
  expect(handOverTaken(controller.signal)).toBe(false);
  expect(fake.seen().find((message) => message.type === "abort")).toMatchObject({
    reason: "cancelled with /cancel",
    handOver: false,
  });
});

it("a job handed over before its runner was ready reaches it as one, after its run", async () => {
  const fake = fakeRunner();
  runner = new JobRunner({ entry: fake.entry, stateKey: "c3RhdGU=", log, niceness: 0 });
  const controller = new AbortController();
  controller.abort(new HandOver());
  await runner.run(job, token, controller.signal);
  expect(handOverTaken(controller.signal)).toBe(true);
  const types = fake.seen().map((message) => message.type);
  expect(types.indexOf("run")).toBeGreaterThan(-1);
  expect(types.indexOf("run")).toBeLessThan(types.lastIndexOf("abort"));
});

it("a job handed to a runner that stops before it is ready runs once, in the runner that replaces it", async () => {
  const { fake, controller, running } = await jobInRunner({ failFirstStart: true });
  // The abort's answer comes after anything sent before it has arrived.
  controller.abort("cancelled with /cancel");
  await running;
  expect(fake.seen().filter((message) => message.type === "start")).toHaveLength(1);
  expect(fake.seen().filter((message) => message.type === "run")).toHaveLength(1);
});
