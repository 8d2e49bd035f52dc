import nock from "nock";
import { describe, expect, it, vi } from "vitest";
import { createCommandRunner, type CommandRunner, type RunOptions } from "../../src/workspace/command-runner.js";
import { REGISTRY_HOSTS } from "../../src/workspace/egress-policy.js";
import type { JobNetwork } from "../../src/workspace/egress-proxy.js";
import { createBareRepo } from "../helpers/git-repo.js";
import { githubDouble } from "../helpers/github-double.js";
import { samplePlan, type ModelRequest, type Script, type ScriptedReply } from "../helpers/model-server.js";
import { commentPayload, startTestApp, type TestApp } from "../helpers/app.js";
import { stateOf, useAppFixture, visible } from "../helpers/app-fixture.js";
import { PATIENCE_MS } from "../helpers/patience.js";

/**
 * docs/reliability.md's promises, driven through the real Probot app: GitHub doubled with nock, a scripted model, real
 * git.
 */

const fx = useAppFixture({ files: { "README.md": "# Hello\n" } });
const { start, seedPlan } = fx;

const submit: ScriptedReply = { toolCalls: [{ name: "submit_plan", arguments: samplePlan() }] };
const complete = (id: string) => ({
  toolCalls: [{ name: "complete_step", arguments: { step_id: id, summary: `did ${id}` } }],
});
const write = (path: string, content: string) => ({
  toolCalls: [{ name: "write_file", arguments: { path, content } }],
});
const stepOf = (request: ModelRequest) => /^Step (S\d+):/.exec(String(request.messages[1]?.content))?.[1];
const oneStep = samplePlan({ verification: [], steps: [{ id: "S1", title: "One", details: "", files: [], deps: [] }] });
const twoSteps = samplePlan({
  verification: [],
  steps: [
    { id: "S1", title: "One", details: "", files: [], deps: [] },
    { id: "S2", title: "Two", details: "", files: [], deps: ["S1"] },
  ],
});

/**
 * An app whose first model request hangs; `busy` resolves once a job is running (holding it), `comment` sends a
 * command.
 */
async function startWithBusyThread() {
  let firstArrived: () => void = () => undefined;
  const busy = new Promise<void>((resolve) => (firstArrived = resolve));
  const app = await start([
    () => {
      firstArrived();
      return { hang: true };
    },
  ]);
  const comment = (id: string, body: string) =>
    app.probot.receive({
      id,
      name: "issue_comment",
      payload: commentPayload({ body, cloneUrl: fx.repo.url }),
    } as Parameters<typeof app.probot.receive>[0]);
  return { app, busy, comment };
}

describe("sandbox settings reach the command runner", () => {
  it("a repository's `network: true` (registries) gives every command a build runs one network: setup, the agent's run_command, the test command", async () => {
    fx.repo.commit(
      { ".github/blueprint.yml": "network: true\nsetup: echo setup-ran\ntest: echo tests-ran\n" },
      "configure blueprint",
    );
    const calls: Array<{ command: string; network: JobNetwork | undefined }> = [];
    const plain = createCommandRunner();
    const recording: CommandRunner = {
      isolation: plain.isolation,
      run: (command: string, options: RunOptions) => {
        calls.push({ command, network: options.network });
        return plain.run(command, options);
      },
    };
    const app = await start(
      [
        { toolCalls: [{ name: "run_command", arguments: { command: "echo agent-ran", timeout_s: null } }] },
        complete("S1"),
      ],
      {},
      { deps: { runner: recording } },
    );
    seedPlan(oneStep);
    await app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));

    expect(calls.map((call) => call.command)).toEqual(["echo setup-ran", "echo agent-ran", "echo tests-ran"]);
    const [network] = calls.map((call) => call.network);
    expect(calls.every((call) => call.network === network)).toBe(true);
    expect(network?.policy.allow.map((entry) => (entry.kind === "host" ? `${entry.host}:${entry.port}` : "?"))).toEqual(
      REGISTRY_HOSTS.map((host) => `${host}:443`),
    );
    expect(String(fx.model.requests[1]!.messages.at(-1)?.content)).toContain("agent-ran");
    expect(stateOf(fx.github.botComments()[0]!.body).status).toBe("built");
  });
});

describe("one job at a time per thread", () => {
  it("/cancel stops the running job and says that the command queued behind it will not run", async () => {
    const { app, busy, comment: receive } = await startWithBusyThread();
    await receive("c-1", "/plan first");
    await busy;
    await receive("c-2", "/plan second");
    await vi.waitFor(() => expect(fx.github.botComments().some((c) => c.body.startsWith("Queued:"))).toBe(true), {
      timeout: PATIENCE_MS,
    });
    await receive("c-3", "/cancel");
    await app.blueprint.idle();
    const replies = fx.github.botComments().map((c) => c.body);
    expect(replies).toContain(
      "Stopping planning for @maintainer at the next safe point. Everything already pushed stays. The command queued behind it will not run; comment again if you still want it.",
    );
    expect(fx.model.requests).toHaveLength(1); // the queued /plan never ran
  });

  it("a second command on a busy thread gets the Queued notice and runs after the first ends; another thread's command runs at once", async () => {
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let firstArrived: () => void = () => undefined;
    const heldRequest = new Promise<void>((resolve) => (firstArrived = resolve));
    const seen: string[] = [];
    // Each request is recognised by the instructions it carries; the first on thread A is held until released.
    const reply = (request: ModelRequest): ScriptedReply | Promise<ScriptedReply> => {
      const text = JSON.stringify(request.messages);
      const which = ["second-on-A", "first-on-A", "on-B"].find((marker) => text.includes(marker)) ?? "unknown";
      seen.push(which);
      if (which !== "first-on-A") return submit;
      firstArrived();
      return released.then(() => submit);
    };
    const app = await start([reply, reply, reply]);
    const otherRepo = createBareRepo({ "README.md": "# Other\n" });
    const other = githubDouble({ repo: "Other-World", permissions: { maintainer: "write" } });
    const onOtherThread = (body: string) => {
      const payload = commentPayload({ body, cloneUrl: otherRepo.url });
      Object.assign(payload.repository, {
        name: "Other-World",
        full_name: "Codertocat/Other-World",
        html_url: "https://github.com/Codertocat/Other-World",
      });
      return payload;
    };
    const receive = (id: string, payload: unknown) =>
      app.probot.receive({ id, name: "issue_comment", payload } as Parameters<typeof app.probot.receive>[0]);

    await receive("a-1", commentPayload({ body: "/plan first-on-A", cloneUrl: fx.repo.url }));
    await heldRequest;
    await receive("a-2", commentPayload({ body: "/plan second-on-A", cloneUrl: fx.repo.url }));
    await vi.waitFor(
      () =>
        expect(fx.github.botComments().map((c) => c.body)).toContain(
          "Queued: Blueprint is busy on this thread (planning for @maintainer); this starts when it is done.",
        ),
      { timeout: PATIENCE_MS },
    );

    // Thread B is not held up by thread A's job.
    await receive("b-1", onOtherThread("/plan on-B"));
    await vi.waitFor(() => expect(other.botComments()[0]?.body).toMatch(/^## 📋 Plan v1/), { timeout: PATIENCE_MS });
    expect(seen).toEqual(["first-on-A", "on-B"]);
    expect(fx.github.botComments()[0]!.body).toMatch(/^## ⏳ Planning…/);

    release();
    await vi.waitFor(() => expect(seen).toHaveLength(3), { timeout: PATIENCE_MS });
    await app.blueprint.idle();
    expect(seen).toEqual(["first-on-A", "on-B", "second-on-A"]);
    // On thread A the first job's plan was written before the second job posted anything of its own.
    const writes = fx.github.requests
      .filter((r) => r.method !== "GET")
      .map((r) => String((r.body as { body?: string } | null)?.body ?? "").split("\n")[0] ?? "");
    const planned = writes.findIndex((line) => line.startsWith("## 📋 Plan v1"));
    const secondStarted = writes.findIndex((line) => line.startsWith("## ⏳ Revising the plan (v1 → v2)"));
    expect(planned).toBeGreaterThan(-1);
    expect(secondStarted).toBeGreaterThan(planned);
    expect(fx.github.botComments().map((c) => c.body.split("\n")[0])).toEqual([
      "## 📋 Plan v1: Add retry to the HTTP client",
      "Queued: Blueprint is busy on this thread (planning for @maintainer); this starts when it is done.",
      "## 📋 Plan v2: Add retry to the HTTP client",
    ]);
    // Thread B never saw a Queued notice.
    expect(other.botComments().map((c) => c.body.split("\n")[0])).toEqual([
      "## 📋 Plan v1: Add retry to the HTTP client",
    ]);
  });
});

describe("the status comment always ends with a final header", () => {
  it("a /plan whose plan edit GitHub answers with 500 ends its status comment with ## ❌, not ⏳", async () => {
    // Registered before the double, so it answers first: only the edit that carries the plan, once.
    const serverError = nock("https://api.github.com")
      .patch(/^\/repos\/Codertocat\/Hello-World\/issues\/comments\/\d+$/, (body: { body: string }) =>
        body.body.startsWith("## 📋 Plan v1"),
      )
      .reply(500, { message: "Server Error" });
    const app = await start([submit]);
    await app.deliver("issue_comment", commentPayload({ body: "/plan", cloneUrl: fx.repo.url }));
    expect(serverError.isDone()).toBe(true);
    const [status] = fx.github.botComments();
    const history = fx.github.commentHistory.get(status!.id)!;
    expect(history[0]).toMatch(/^## ⏳ Planning…/);
    expect(history.at(-1)).toMatch(/^## ❌ Planning failed/);
    expect(history.at(-1)).toContain("Blueprint could not make a plan: Server Error.");
    expect(stateOf(status!.body).status).toBe("failed");
    expect(fx.github.botComments()).toHaveLength(1);
  });

  it("a /plan whose repository cannot be fetched ends its status comment with ## ❌, not ⏳", async () => {
    const app = await start([submit]);
    await app.deliver("issue_comment", commentPayload({ body: "/plan", cloneUrl: "file:///nonexistent/repo.git" }));
    const [status] = fx.github.botComments();
    const history = fx.github.commentHistory.get(status!.id)!;
    expect(history[0]).toMatch(/^## ⏳ Planning…/);
    expect(history.at(-1)).toMatch(/^## ❌ Planning failed/);
    expect(history.at(-1)).toContain("could not fetch the repository");
    expect(fx.model.requests).toHaveLength(0);
  });

  it("a secondary rate limit on the plan edit is waited out 3 times, then the status comment says so in plain words", async () => {
    const limited: string[] = [];
    nock("https://api.github.com")
      .persist()
      .patch(/^\/repos\/Codertocat\/Hello-World\/issues\/comments\/\d+$/, (body: { body: string }) =>
        body.body.startsWith("## 📋 Plan v1"),
      )
      .reply((uri) => {
        limited.push(uri);
        return [
          403,
          { message: "You have exceeded a secondary rate limit. Please wait a few minutes before you try again." },
          { "retry-after": "1" },
        ];
      });
    // Progress edits once per 10 minutes: only the first goes out, which keeps this test's paced writes few.
    const app = await start([submit], { BLUEPRINT_PROGRESS_INTERVAL_MS: "600000" }, { githubRetries: true });
    await app.deliver("issue_comment", commentPayload({ body: "/plan", cloneUrl: fx.repo.url }));
    expect(limited).toHaveLength(4);
    const [status] = fx.github.botComments();
    expect(status!.body).toMatch(/^## ❌ Planning failed/);
    expect(status!.body).toContain(
      "Blueprint could not make a plan: You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
    );
    expect(fx.github.botComments()).toHaveLength(1);
  });
});

describe("graceful shutdown", () => {
  /** A 2-step build during which the app is told to stop (as SIGTERM does) once S1 is pushed and S2 has begun. */
  async function buildUntilShutdown(after: Script = []) {
    let stopping: Promise<void> | null = null;
    let app: TestApp | null = null;
    app = await start([
      write("one.txt", "1\n"),
      complete("S1"),
      () => {
        stopping = app!.blueprint.shutdown(PATIENCE_MS);
        return write("two.txt", "2\n");
      },
      ...after,
    ]);
    const plan = seedPlan(twoSteps);
    await app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    expect(stopping).not.toBeNull();
    await stopping;
    return { planBody: () => fx.github.comments.find((c) => c.id === plan.id)!.body };
  }

  it("stops a build at a safe point with S1 pushed, and a new instance's /build resumes at S2 without redoing S1", async () => {
    const { planBody } = await buildUntilShutdown([write("two.txt", "2\n"), complete("S2")]);

    expect(fx.repo.log("blueprint/issue-1")).toEqual(["S1: One", "initial commit"]);
    const stopped = stateOf(planBody());
    expect(stopped).toMatchObject({
      status: "cancelled",
      steps: { S1: { status: "done" }, S2: { status: "pending" } },
    });
    expect(stopped.error).toMatch(
      /^Blueprint was shut down \(a restart or deploy\); comment `\/build` or `\/plan` again to resume/,
    );
    expect(visible(planBody())).toContain("> ⏹️ **Stopped:** Blueprint was shut down (a restart or deploy)");
    expect(visible(planBody())).toContain("Everything already pushed stays; `/build` resumes.");
    expect(visible(planBody())).toMatch(/- \*\*S2\*\* Two — not built/);

    const restarted = await startTestApp({ OPENAI_BASE_URL: fx.model.url });
    await restarted.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    expect(fx.model.requests.slice(3).map(stepOf)).toEqual(["S2", "S2"]);
    expect(fx.repo.log("blueprint/issue-1")).toEqual(["S2: Two", "S1: One", "initial commit"]);
    expect(stateOf(planBody())).toMatchObject({
      status: "built",
      steps: { S1: { status: "done" }, S2: { status: "done" } },
    });
  });

  // People read the plan comment, not the hidden marker: the reason must be visible there.
  it("says on the plan comment, where people read it, that the build stopped because Blueprint was shut down", async () => {
    const { planBody } = await buildUntilShutdown();
    expect(visible(planBody())).toMatch(/shut down/);
  });

  it("answers a command queued behind the running job on its thread instead of dropping it", async () => {
    const { app, busy, comment } = await startWithBusyThread();
    await comment("a-1", "/plan first");
    await busy;
    await comment("a-2", "/plan second");
    await vi.waitFor(
      () =>
        expect(fx.github.botComments().map((c) => c.body)).toContain(
          "Queued: Blueprint is busy on this thread (planning for @maintainer); this starts when it is done.",
        ),
      { timeout: PATIENCE_MS },
    );

    await app.blueprint.shutdown(PATIENCE_MS);
    await app.blueprint.idle();
    expect(fx.model.requests).toHaveLength(1);
    const [first, queued, second] = fx.github.botComments();
    expect(queued!.body).toMatch(/^Queued:/);
    expect(first!.body).toMatch(/^## ❌ Planning failed/);
    // The queued command started already stopped: it says so, and what to do, without calling the model.
    expect(second?.body).toMatch(/^## ❌ Planning failed/);
    expect(second?.body).toContain("the run was cancelled");
    expect(second?.body).toContain("Comment `/plan` to start again.");
  });

  it("answers a command that arrives while the app shuts down, without starting a model run", async () => {
    const app = await start([submit]);
    await app.blueprint.shutdown(PATIENCE_MS);
    await app.deliver("issue_comment", commentPayload({ body: "/plan", cloneUrl: fx.repo.url }));
    expect(fx.model.requests).toHaveLength(0);
    expect(fx.github.botComments().map((c) => c.body.split("\n")[0])).toEqual(["## ❌ Planning failed"]);
  });
});

describe("model retries", () => {
  it("a model request that times out is retried after the first was abandoned, and the plan is posted", async () => {
    const app = await start([{ hang: true }, submit], { BLUEPRINT_MODEL_TIMEOUT_S: "1", BLUEPRINT_MODEL_RETRIES: "1" });
    await app.deliver("issue_comment", commentPayload({ body: "/plan", cloneUrl: fx.repo.url }));
    expect(fx.model.requests).toHaveLength(2);
    // The same turn, sent again only after the timed-out request was given up (not a hedge in parallel).
    expect(fx.model.requests[1]!.messages).toEqual(fx.model.requests[0]!.messages);
    expect(fx.model.events).toEqual(["request 0", "closed 0", "request 1"]);
    expect(fx.github.botComments().map((c) => c.body.split("\n")[0])).toEqual([
      "## 📋 Plan v1: Add retry to the HTTP client",
    ]);
  });
});
