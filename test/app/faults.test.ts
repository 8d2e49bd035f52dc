import nock from "nock";
import { expect, it, vi } from "vitest";
import { samplePlan } from "../helpers/model-server.js";
import { commentPayload, settle } from "../helpers/app.js";
import { stateOf, useAppFixture } from "../helpers/app-fixture.js";
import { chmodSync, writeFileSync } from "node:fs";
import path from "node:path";
import { PATIENCE_MS } from "../helpers/patience.js";
import { isRunning, sleeper } from "../helpers/sleeper.js";

const fx = useAppFixture({ files: { "README.md": "# Hello\n" } });
const { start } = fx;

const twoSteps = samplePlan({
  verification: [],
  steps: [
    { id: "S1", title: "One", details: "", files: [], deps: [] },
    { id: "S2", title: "Two", details: "", files: [], deps: ["S1"] },
  ],
});
const seed = () => fx.seedPlan(twoSteps);
const submit = { toolCalls: [{ name: "submit_plan", arguments: samplePlan() }] };

it("retries a model endpoint answering 429, then plans", async () => {
  await start([{ status: 429, body: { error: { message: "slow down" } } }, submit], { BLUEPRINT_MODEL_RETRIES: "2" });
  await fx.app.deliver("issue_comment", commentPayload({ body: "/plan", cloneUrl: fx.repo.url }));
  expect(fx.model.requests).toHaveLength(2);
  expect(fx.github.botComments()[0]!.body).toMatch(/^## 📋 Plan v1/);
});

it("reports a model endpoint that hangs in plain words", async () => {
  await start([{ hang: true }], { BLUEPRINT_MODEL_TIMEOUT_S: "1" });
  await fx.app.deliver("issue_comment", commentPayload({ body: "/plan", cloneUrl: fx.repo.url }));
  const body = fx.github.botComments()[0]!.body;
  expect(body).toMatch(/^## ❌ Planning failed/);
  expect(body).toContain("did not answer in time");
});

it("waits out GitHub's 502 and secondary rate limit instead of dropping the write", async () => {
  // Registered before the double, so these answer first, once each.
  const badGateway = nock("https://api.github.com")
    .post("/repos/Codertocat/Hello-World/issues/1/comments")
    .reply(502, { message: "Bad Gateway" });
  const secondaryLimit = nock("https://api.github.com")
    .post("/repos/Codertocat/Hello-World/issues/1/comments")
    .reply(
      403,
      { message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again." },
      { "retry-after": "1" },
    );
  await start([], {}, { githubRetries: true });
  await fx.app.deliver("issue_comment", commentPayload({ body: "/help", cloneUrl: fx.repo.url }));
  expect(fx.github.botComments().map((c) => c.body.split("\n")[0])).toEqual(["### Blueprint commands"]);
  expect(badGateway.isDone()).toBe(true);
  expect(secondaryLimit.isDone()).toBe(true);
});

it("marks the step failed when the push is rejected, keeping what was pushed before", async () => {
  const hook = path.join(fx.repo.bare, "hooks", "pre-receive");
  await start([
    { toolCalls: [{ name: "write_file", arguments: { path: "one.txt", content: "1\n" } }] },
    { toolCalls: [{ name: "complete_step", arguments: { step_id: "S1", summary: "one" } }] },
    (request) => {
      // S1 is pushed; from now on the remote rejects pushes.
      writeFileSync(hook, "#!/bin/sh\necho 'protected branch' >&2\nexit 1\n");
      chmodSync(hook, 0o755);
      return {
        toolCalls: [{ name: "write_file", arguments: { path: "two.txt", content: String(request.messages.length) } }],
      };
    },
    { toolCalls: [{ name: "complete_step", arguments: { step_id: "S2", summary: "two" } }] },
  ]);
  const plan = seed();
  await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
  expect(fx.repo.log("blueprint/issue-1")).toEqual(["S1: One", "initial commit"]);
  const body = fx.github.comments.find((c) => c.id === plan.id)!.body;
  expect(body).toMatch(/- \[ \] \*\*S2\*\* ❌ Two.*failed: the push to blueprint\/issue-1 was rejected/);
  expect(stateOf(body)).toMatchObject({
    status: "failed",
    steps: { S1: { status: "done" }, S2: { status: "failed" } },
  });
});

it("reports a fetch failure during /build on the thread instead of failing silently", async () => {
  await start([]);
  seed();
  await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: "file:///nonexistent/repo.git" }));
  const reply = fx.github.botComments().at(-1)!.body;
  expect(reply).toMatch(/^❌ Blueprint stopped while building for @maintainer: could not fetch the repository/);
  expect(reply).toContain("delivery");
});

it("/cancel stops a running build promptly and keeps what was pushed", async () => {
  const command = sleeper();
  await start([
    { toolCalls: [{ name: "write_file", arguments: { path: "one.txt", content: "1\n" } }] },
    { toolCalls: [{ name: "complete_step", arguments: { step_id: "S1", summary: "one" } }] },
    { toolCalls: [{ name: "run_command", arguments: { command, timeout_s: 600 } }] },
  ]);
  const plan = seed();
  await fx.app.probot.receive({
    id: "build-1",
    name: "issue_comment",
    payload: commentPayload({ body: "/build", cloneUrl: fx.repo.url }),
  } as never);
  await expect.poll(() => isRunning(command)).toBe(true);
  await fx.app.deliver("issue_comment", commentPayload({ body: "/cancel", cloneUrl: fx.repo.url }));
  await settle(fx.app.blueprint);
  expect(fx.github.botComments().some((c) => c.body.startsWith("Stopping building for @maintainer"))).toBe(true);
  const body = fx.github.comments.find((c) => c.id === plan.id)!.body;
  expect(stateOf(body)).toMatchObject({
    status: "cancelled",
    steps: { S1: { status: "done" }, S2: { status: "pending" } },
  });
  expect(fx.repo.log("blueprint/issue-1")).toEqual(["S1: One", "initial commit"]);
});

it("/cancel also stops the verification commands after the last step", async () => {
  const command = sleeper();
  fx.repo.commit({ ".github/blueprint.yml": `test: ${command}\n` }, "configure");
  await start([
    { toolCalls: [{ name: "write_file", arguments: { path: "one.txt", content: "1\n" } }] },
    { toolCalls: [{ name: "complete_step", arguments: { step_id: "S1", summary: "one" } }] },
    { toolCalls: [{ name: "write_file", arguments: { path: "two.txt", content: "2\n" } }] },
    { toolCalls: [{ name: "complete_step", arguments: { step_id: "S2", summary: "two" } }] },
  ]);
  const plan = seed();
  await fx.app.probot.receive({
    id: "build-v",
    name: "issue_comment",
    payload: commentPayload({ body: "/build", cloneUrl: fx.repo.url }),
  } as never);
  // Both steps are pushed once the plan comment says it is verifying; the test command (an hour's sleep) then runs.
  await vi.waitFor(() => expect(fx.github.comments.find((c) => c.id === plan.id)!.body).toContain("Verifying…"), {
    timeout: PATIENCE_MS,
  });
  await expect.poll(() => isRunning(command)).toBe(true);
  await fx.app.deliver("issue_comment", commentPayload({ body: "/cancel", cloneUrl: fx.repo.url }));
  await settle(fx.app.blueprint); // without the signal, this waits out the sleep's 10-minute cap: the test times out
  const state = stateOf(fx.github.comments.find((c) => c.id === plan.id)!.body);
  expect(state).toMatchObject({ status: "cancelled", steps: { S1: { status: "done" }, S2: { status: "done" } } });
  expect(state.pullRequest ?? null).toBeNull();
  expect(fx.repo.log("blueprint/issue-1")).toEqual(["S2: Two", "S1: One", "configure", "initial commit"]);
});
