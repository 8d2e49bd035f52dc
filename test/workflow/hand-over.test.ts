import { Octokit } from "@octokit/rest";
import nock from "nock";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadEnv } from "../../src/config/env.js";
import { createOctokitPort, type PortOctokit } from "../../src/github/octokit-port.js";
import { MARKER_PREFIX } from "../../src/github/state-marker.js";
import { createWorkflowDeps } from "../../src/app/create-deps.js";
import type { Logger } from "../../src/workflow/deps.js";
import { HandOver, handOverTaken } from "../../src/shared/hand-over.js";
import { planThread } from "../../src/workflow/plan/plan.js";
import type { ThreadPort } from "../../src/workflow/ports.js";
import { createBareRepo, tempDir } from "../helpers/git-repo.js";
import { BOT_LOGIN, githubDouble, type GitHubDouble } from "../helpers/github-double.js";
import { samplePlan, startModelServer, type ModelServer, type Script } from "../helpers/model-server.js";

/**
 * A Redis worker that shuts down puts its running job back in the queue only when the job stopped
 * for it at a safe point. A job told to stop after its last one (its plan already being posted)
 * has finished: put back, it would run again on the next worker — a second plan revision.
 */

const quiet = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
} as unknown as Logger;
let github: GitHubDouble;
let model: ModelServer | null = null;
beforeEach(() => {
  nock.disableNetConnect();
  nock.enableNetConnect("127.0.0.1");
  github = githubDouble({ permissions: { maintainer: "write" } });
});
afterEach(async () => {
  await model?.close();
  model = null;
  nock.cleanAll();
  nock.enableNetConnect();
});

async function plan(script: Script, stopWhen: (write: string) => boolean) {
  const repo = createBareRepo({
    "README.md": "# Hello\n",
    "src/client.js": "export const get = (url) => fetch(url);\n",
  });
  model = await startModelServer(script);
  const env = loadEnv({
    BLUEPRINT_WORKDIR: tempDir("blueprint-workdir-"),
    BLUEPRINT_PROGRESS_INTERVAL_MS: "0",
    BLUEPRINT_MODEL: "test-model",
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: "sk-test-model-key-000000000000000000",
    BLUEPRINT_MODEL_RETRIES: "0",
    BLUEPRINT_STATE_SECRET: "a-state-secret-for-the-tests-0000",
    PATH: process.env.PATH ?? "",
  });
  const deps = createWorkflowDeps(env, quiet);
  const thread = createOctokitPort({
    octokit: new Octokit({
      auth: "ghs_TestInstallationToken0000000000000000",
      request: { retries: 0 },
    }) as unknown as PortOctokit,
    repo: {
      owner: "Codertocat",
      name: "Hello-World",
      cloneUrl: repo.url,
      defaultBranch: "main",
      htmlUrl: "https://github.com/Codertocat/Hello-World",
    },
    number: 1,
    isOwnComment: (comment) => comment.user?.login === BOT_LOGIN && comment.body.includes(MARKER_PREFIX),
  });
  // The worker's shutdown, at the moment the use case writes a comment that matches.
  const controller = new AbortController();
  const stopAt = (body: string) => {
    if (stopWhen(body) && !controller.signal.aborted) controller.abort(new HandOver());
  };
  const port: ThreadPort = {
    ...thread,
    postComment: (body) => (stopAt(body), thread.postComment(body)),
    updateComment: (id, body) => (stopAt(body), thread.updateComment(id, body)),
  };
  await planThread(
    deps,
    { port, actor: "maintainer", signal: controller.signal, deliveryId: "d-1" },
    { trigger: { kind: "plan", instructions: "add retries" } },
  );
  return { signal: controller.signal, bodies: github.comments.map((comment) => comment.body) };
}

describe("a planning job and its worker's shutdown", () => {
  it("stopped while the model works: it stops there and is handed over, with no plan posted", async () => {
    const { signal, bodies } = await plan([{ hang: true }], (body) => body.includes("Planning"));
    expect(handOverTaken(signal)).toBe(true);
    expect(bodies.some((body) => body.includes("Plan v1"))).toBe(false);
  });

  it("stopped while its plan is being posted: it has finished, and is not handed over to run again", async () => {
    const { signal, bodies } = await plan([{ toolCalls: [{ name: "submit_plan", arguments: samplePlan() }] }], (body) =>
      body.includes("Plan v1"),
    );
    expect(signal.aborted).toBe(true);
    expect(bodies.filter((body) => body.includes("Plan v1"))).toHaveLength(1);
    expect(handOverTaken(signal)).toBe(false);
  });
});
