import nock from "nock";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createActionOctokit } from "../../src/action/octokit.js";
import { loadEnv } from "../../src/config/env.js";
import { createOctokitPort } from "../../src/github/octokit-port.js";
import { ownCommentMatcher } from "../../src/github/own-comment.js";
import { readStateMarker } from "../../src/github/state-marker.js";
import { createWorkflowDeps } from "../../src/app/create-deps.js";
import type { WorkflowDeps } from "../../src/workflow/deps.js";
import { buildThread } from "../../src/workflow/build/build.js";
import { planThread, type PlanRequest } from "../../src/workflow/plan/plan.js";
import type { ThreadPort } from "../../src/workflow/ports.js";
import { safePort } from "../../src/workflow/safe-port.js";
import { createBareRepo, tempDir, type BareRepo } from "../helpers/git-repo.js";
import { APP_ID, BOT_LOGIN, githubDouble, INSTALLATION_TOKEN, type GitHubDouble } from "../helpers/github-double.js";
import { samplePlan, startModelServer, type ModelServer, type ScriptedReply } from "../helpers/model-server.js";
import { pendingState, planCommentBody, TEST_STATE_SECRET, testSeal } from "../helpers/plan-state.js";
import { PATIENCE_MS } from "../helpers/patience.js";

/**
 * A planning job whose process died is run again from the start by another process, with the same
 * delivery id: it must carry on in the status comment its first run posted, not leave that one
 * saying "Planning…" forever beside a second one.
 */

const quiet = { info: () => {}, warn: () => {}, error: () => {} };
const submit: ScriptedReply = { toolCalls: [{ name: "submit_plan", arguments: samplePlan() }] };
const PLAN: PlanRequest = { trigger: { kind: "plan", instructions: "add retry to the HTTP client" } };

let repo: BareRepo;
let github: GitHubDouble;
let model: ModelServer | null = null;

beforeEach(() => {
  nock.disableNetConnect();
  nock.enableNetConnect("127.0.0.1");
  repo = createBareRepo({ "README.md": "# Hello\n", "src/client.js": "export const get = (url) => fetch(url);\n" });
  github = githubDouble({ permissions: { maintainer: "write" } });
});

afterEach(async () => {
  await model?.close();
  model = null;
  nock.cleanAll();
  nock.enableNetConnect();
});

function engine(modelUrl: string): WorkflowDeps {
  const env = loadEnv({
    BLUEPRINT_SANDBOX: "none",
    BLUEPRINT_WORKDIR: tempDir("plan-takeover-"),
    OPENAI_BASE_URL: modelUrl,
    OPENAI_API_KEY: "sk-takeover-test-key-0000000000000000",
    BLUEPRINT_MODEL: "test-model",
    BLUEPRINT_MODEL_RETRIES: "0",
    BLUEPRINT_PROGRESS_INTERVAL_MS: "0",
    BLUEPRINT_STATE_SECRET: TEST_STATE_SECRET,
  });
  return createWorkflowDeps(env, quiet);
}

/** The thread as a worker sees it: GitHub's double through Octokit, bodies redacted and state checked. */
function threadPort(deps: WorkflowDeps): ThreadPort {
  const octokit = createActionOctokit({
    token: INSTALLATION_TOKEN,
    baseUrl: "https://api.github.com",
    log: quiet,
    paced: false,
  });
  const repository = {
    owner: github.owner,
    name: github.repo,
    cloneUrl: repo.url,
    defaultBranch: "main",
    htmlUrl: `https://github.com/${github.owner}/${github.repo}`,
  };
  const port = createOctokitPort({
    octokit,
    repo: repository,
    number: github.number,
    isOwnComment: ownCommentMatcher({ appId: APP_ID, botLogin: BOT_LOGIN }),
  });
  return safePort(port, deps.redact, deps.stateKey);
}

/** A port whose process can be killed: from then on nothing it is asked reaches GitHub. */
function mortal(port: ThreadPort): { port: ThreadPort; kill(): void } {
  let dead = false;
  const guarded = Object.fromEntries(
    Object.entries(port).map(([name, value]) => [
      name,
      typeof value === "function"
        ? (...args: unknown[]) =>
            dead ? Promise.reject(new Error("the process died")) : (value as (...a: unknown[]) => unknown)(...args)
        : value,
    ]),
  ) as unknown as ThreadPort;
  return { port: guarded, kill: () => (dead = true) };
}

/**
 * A model whose first request (the first run's) is held until `releaseFirst`; the next ones get a plan.
 * The engine is wired to it as the App wires it.
 */
async function startEngine(): Promise<{ deps: WorkflowDeps; releaseFirst(): void }> {
  let releaseFirst: () => void = () => {};
  const released = new Promise<void>((resolve) => (releaseFirst = resolve));
  model = await startModelServer([
    async () => {
      await released;
      return submit;
    },
    submit,
  ]);
  return { deps: engine(model.url), releaseFirst };
}

/**
 * The first run of `deliveryId` gets as far as asking the model, and its process dies there: its
 * status comment stays as it was. Returns what settles the first run once it has given up.
 */
async function firstRunDies(
  wired: { deps: WorkflowDeps; releaseFirst(): void },
  deliveryId: string,
  request: PlanRequest,
): Promise<() => Promise<void>> {
  const dying = mortal(threadPort(wired.deps));
  const run = planThread(
    wired.deps,
    { port: dying.port, actor: "maintainer", signal: new AbortController().signal, deliveryId },
    request,
  );
  await waitFor(() => model?.requests.length === 1);
  dying.kill();
  return async () => {
    wired.releaseFirst();
    await expect(run).rejects.toThrow(/the process died/);
  };
}

/**
 * A first run of `deliveryId` whose process dies the moment GitHub has its new status comment, before
 * the edit that signs its state in. Returns the engine (its model answers the next run with a plan) and that comment.
 */
async function firstRunDiesAfterPosting(deliveryId: string) {
  model = await startModelServer([submit]);
  const deps = engine(model.url);
  const dying = mortal(threadPort(deps));
  const port: ThreadPort = {
    ...dying.port,
    postComment: async (body) => dying.port.postComment(body).finally(() => dying.kill()),
  };
  await expect(
    planThread(deps, { port, actor: "maintainer", signal: new AbortController().signal, deliveryId }, PLAN),
  ).rejects.toThrow(/the process died/);
  const [unsigned] = github.botComments();
  return { deps, unsigned };
}

async function waitFor(done: () => boolean): Promise<void> {
  const deadline = Date.now() + PATIENCE_MS;
  while (!done()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const stateIn = (id: number, body: string) => {
  const read = readStateMarker(body, testSeal(id));
  if (read.kind !== "ok") throw new Error(`comment ${id} holds no valid state (${read.kind})`);
  return read.state;
};

describe("a planning job taken over after its process died", () => {
  it("the run with the same delivery id carries on in the first run's status comment: one comment, the plan", async () => {
    const started = await startEngine();
    const deps = started.deps;
    const settleFirst = await firstRunDies(started, "delivery-A", PLAN);
    const [status] = github.botComments();
    expect(status?.body).toMatch(/^## ⏳ Planning…/);
    expect(stateIn(status?.id ?? -1, status?.body ?? "")).toMatchObject({
      status: "planning",
      deliveryId: "delivery-A",
    });

    await planThread(
      deps,
      { port: threadPort(deps), actor: "maintainer", signal: new AbortController().signal, deliveryId: "delivery-A" },
      PLAN,
    );
    await settleFirst();

    const bot = github.botComments();
    expect(bot).toHaveLength(1);
    expect(bot[0]?.id).toBe(status?.id);
    expect(bot[0]?.body).toMatch(/^## 📋 Plan v1: Add retry to the HTTP client/);
    expect(stateIn(bot[0]?.id ?? -1, bot[0]?.body ?? "")).toMatchObject({
      status: "pending",
      revision: 1,
      instructions: "add retry to the HTTP client",
      deliveryId: "delivery-A",
    });
    // The second run posted nothing: it edited the comment the first one had posted.
    expect(github.requests.filter((r) => r.method === "POST" && r.path.endsWith("/issues/1/comments"))).toHaveLength(1);
  });

  it("a first run that died between posting its status comment and signing it: the next run of that delivery carries on in that comment", async () => {
    const { deps, unsigned } = await firstRunDiesAfterPosting("delivery-U");
    expect(unsigned?.body).toMatch(/^## ⏳ Planning…/);
    expect(readStateMarker(unsigned?.body ?? "", testSeal(unsigned?.id ?? -1)).kind).toBe("none");

    await planThread(
      deps,
      { port: threadPort(deps), actor: "maintainer", signal: new AbortController().signal, deliveryId: "delivery-U" },
      PLAN,
    );

    const bot = github.botComments();
    expect(bot.map((c) => c.id)).toEqual([unsigned?.id]);
    expect(bot[0]?.body).toMatch(/^## 📋 Plan v1: Add retry to the HTTP client/);
    expect(stateIn(bot[0]?.id ?? -1, bot[0]?.body ?? "")).toMatchObject({
      status: "pending",
      revision: 1,
      deliveryId: "delivery-U",
    });
    expect(github.requests.filter((r) => r.method === "POST" && r.path.endsWith("/issues/1/comments"))).toHaveLength(1);
  });

  it("an unsigned status comment of another delivery's run is not taken: the run posts its own", async () => {
    const { deps, unsigned } = await firstRunDiesAfterPosting("delivery-U");

    await planThread(
      deps,
      { port: threadPort(deps), actor: "maintainer", signal: new AbortController().signal, deliveryId: "delivery-V" },
      PLAN,
    );

    const bot = github.botComments();
    expect(bot).toHaveLength(2);
    expect(bot[0]?.body).toBe(unsigned?.body);
    expect(stateIn(bot[1]?.id ?? -1, bot[1]?.body ?? "")).toMatchObject({
      status: "pending",
      deliveryId: "delivery-V",
    });
  });

  it("a run for another delivery leaves that comment alone and posts its own", async () => {
    const started = await startEngine();
    const deps = started.deps;
    const settleFirst = await firstRunDies(started, "delivery-A", PLAN);
    const [abandoned] = github.botComments();
    const before = abandoned?.body;

    await planThread(
      deps,
      { port: threadPort(deps), actor: "maintainer", signal: new AbortController().signal, deliveryId: "delivery-B" },
      PLAN,
    );
    await settleFirst();

    const bot = github.botComments();
    expect(bot).toHaveLength(2);
    expect(bot[0]?.id).toBe(abandoned?.id);
    expect(bot[0]?.body).toBe(before);
    expect(bot[1]?.body).toMatch(/^## 📋 Plan v1/);
    expect(stateIn(bot[1]?.id ?? -1, bot[1]?.body ?? "")).toMatchObject({
      status: "pending",
      deliveryId: "delivery-B",
    });
  });

  it("a revision taken over records its feedback once, makes v2 in the first run's comment and supersedes v1", async () => {
    const v1 = github.addBotComment((id) =>
      planCommentBody(pendingState(samplePlan(), { base: { branch: "main", sha: repo.head() } }), testSeal(id)),
    );
    const started = await startEngine();
    const deps = started.deps;
    const revise: PlanRequest = {
      trigger: {
        kind: "feedback",
        feedback: { author: "maintainer", source: "revise", text: "use exponential backoff" },
      },
    };
    const settleFirst = await firstRunDies(started, "delivery-R", revise);
    expect(github.botComments().at(-1)?.body).toMatch(/^## ⏳ Revising the plan \(v1 → v2\)…/);

    await planThread(
      deps,
      { port: threadPort(deps), actor: "maintainer", signal: new AbortController().signal, deliveryId: "delivery-R" },
      revise,
    );
    await settleFirst();

    const bot = github.botComments();
    expect(bot).toHaveLength(2);
    expect(bot[0]?.id).toBe(v1.id);
    expect(stateIn(v1.id, bot[0]?.body ?? "").status).toBe("superseded");
    const v2 = stateIn(bot[1]?.id ?? -1, bot[1]?.body ?? "");
    expect(bot[1]?.body).toMatch(/^## 📋 Plan v2/);
    expect(v2).toMatchObject({ status: "pending", revision: 2 });
    expect(v2.feedback.map((entry) => entry.text)).toEqual(["use exponential backoff"]);
  });
});

describe("a planning job put back after it ran (a replay through a shared queue)", () => {
  it("does not plan again once its delivery's revision is on the thread; another delivery revises as usual", async () => {
    model = await startModelServer([submit, submit]);
    const deps = engine(model.url);
    const run = (deliveryId: string) =>
      planThread(
        deps,
        { port: threadPort(deps), actor: "maintainer", signal: new AbortController().signal, deliveryId },
        PLAN,
      );
    await run("delivery-P");
    expect(github.botComments().map((comment) => comment.body.split("\n")[0])).toEqual([
      "## 📋 Plan v1: Add retry to the HTTP client",
    ]);

    // The same job again, as someone who copied it from Redis put it back: nothing asked of the model or the thread.
    await run("delivery-P");
    expect(model.requests).toHaveLength(1);
    expect(github.botComments()).toHaveLength(1);
    expect(stateIn(github.botComments()[0]?.id ?? -1, github.botComments()[0]?.body ?? "").status).toBe("pending");

    await run("delivery-Q");
    expect(model.requests).toHaveLength(2);
    expect(github.botComments().at(-1)?.body).toMatch(/^## 📋 Plan v2/);
  });
});

describe("a build job put back after it ran", () => {
  it("does not build again once it has stopped building; a new /build resumes the plan", async () => {
    const tool = (name: string, args: Record<string, unknown>): ScriptedReply => ({
      toolCalls: [{ name, arguments: args }],
    });
    model = await startModelServer([
      tool("write_file", { path: "src/retry.js", content: "export const retry = (fn) => fn();\n" }),
      tool("complete_step", { step_id: "S1", summary: "did S1" }),
      tool("complete_step", { step_id: "S2", summary: "cannot", outcome: "blocked" }),
      tool("write_file", { path: "src/client.js", content: "export const get = (url) => fetch(url);\n// retried\n" }),
      tool("complete_step", { step_id: "S2", summary: "did S2" }),
    ]);
    const deps = engine(model.url);
    github.addBotComment((id) =>
      planCommentBody(
        pendingState(samplePlan({ verification: [] }), { base: { branch: "main", sha: repo.head() } }),
        testSeal(id),
      ),
    );
    const build = async (deliveryId: string) => {
      const command = github.addUserComment("maintainer", "/build");
      const approval = {
        approver: "maintainer",
        revision: null,
        steps: [],
        force: false,
        permitted: true,
        minimumPermission: "write",
        commandCommentId: command.id,
        commandCreatedAt: command.created_at,
      };
      const job = { port: threadPort(deps), actor: "maintainer", signal: new AbortController().signal, deliveryId };
      return { run: () => buildThread(deps, job, { approval, fresh: false }) };
    };
    const first = await build("delivery-build");
    await first.run();
    expect(repo.log("blueprint/issue-1")[0]).toBe("S1: Add a retry helper");
    const said = github.botComments().length;

    // The same job again (its /build still on the thread): the build stopped at S2, so it would resume there.
    await first.run();
    expect(model.requests).toHaveLength(3);
    expect(github.botComments()).toHaveLength(said);

    await (await build("delivery-build-again")).run();
    expect(model.requests).toHaveLength(5);
    expect(repo.log("blueprint/issue-1")[0]).toBe("S2: Use the helper in the client");
  });
});
