import { Octokit } from "@octokit/rest";
import { describe, expect, it } from "vitest";
import { loadEnv } from "../../src/config/env.js";
import { createOctokitPort, type PortOctokit } from "../../src/github/octokit-port.js";
import { MARKER_PREFIX } from "../../src/github/state-marker.js";
import { HandOver, handOverTaken } from "../../src/shared/hand-over.js";
import { createWorkflowDeps } from "../../src/app/create-deps.js";
import type { Logger } from "../../src/workflow/deps.js";
import { followFailingChecks, followUpThread } from "../../src/workflow/follow-up/index.js";
import type { ThreadPort } from "../../src/workflow/ports.js";
import { commentPayload } from "../helpers/app.js";
import { stateOf, useAppFixture } from "../helpers/app-fixture.js";
import { tempDir } from "../helpers/git-repo.js";
import { BOT_LOGIN, INSTALLATION_TOKEN } from "../helpers/github-double.js";
import { samplePlan } from "../helpers/model-server.js";
import { TEST_STATE_SECRET } from "../helpers/plan-state.js";

const quiet: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };
const BRANCH = "blueprint/issue-1";
const ACTIONS = { id: 15368, slug: "github-actions" };
const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }] });

describe("a follow-up and its worker's shutdown", () => {
  const fx = useAppFixture({ files: { "README.md": "# Hello\n" } });

  /** A worker of its own, as a replica has: its deps and the port, talking to the GitHub double. */
  function worker() {
    const deps = createWorkflowDeps(
      loadEnv({
        BLUEPRINT_WORKDIR: tempDir("blueprint-workdir-"),
        BLUEPRINT_PROGRESS_INTERVAL_MS: "0",
        BLUEPRINT_MODEL: "test-model",
        OPENAI_BASE_URL: fx.model.url,
        OPENAI_API_KEY: "sk-test-model-key-000000000000000000",
        BLUEPRINT_MODEL_RETRIES: "0",
        BLUEPRINT_STATE_SECRET: TEST_STATE_SECRET,
        PATH: process.env.PATH ?? "",
      }),
      quiet,
    );
    const thread = createOctokitPort({
      octokit: new Octokit({ auth: INSTALLATION_TOKEN, request: { retries: 0 } }) as unknown as PortOctokit,
      repo: {
        owner: "Codertocat",
        name: "Hello-World",
        cloneUrl: fx.repo.url,
        defaultBranch: "main",
        htmlUrl: "https://github.com/Codertocat/Hello-World",
      },
      number: 1,
      isOwnComment: (comment) => comment.user?.login === BOT_LOGIN && comment.body.includes(MARKER_PREFIX),
    });
    return { deps, thread };
  }

  it("stopped at a safe point, it is handed over: the next worker builds the step, and the /fix counts once", async () => {
    let asked = () => {};
    const building = new Promise<void>((resolve) => (asked = resolve));
    await fx.start([
      call("write_file", { path: "src/retry.js", content: "export const retry = (fn) => fn();\n" }),
      call("complete_step", { step_id: "S1", summary: "Added it." }),
      () => (asked(), { hang: true }),
      call("write_file", { path: "README.md", content: "# Hello\n\nRetries: 3.\n" }),
      call("complete_step", { step_id: "F1", summary: "Documented." }),
    ]);
    const plan = fx.seedPlan(
      samplePlan({
        verification: [],
        steps: [{ id: "S1", title: "Add a retry helper", details: "", files: ["src/retry.js"], deps: [] }],
      }),
    );
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    fx.github.pulls[0]!.headSha = fx.repo.head(BRANCH);
    const fix = fx.github.addUserComment("maintainer", "/fix document the retries");

    const { deps, thread } = worker();
    const request = { pullRequest: 100, commentId: fix.id, reviewId: null, reviewState: null, text: "document it" };
    const run = async (stopWhen: (body: string) => boolean) => {
      const controller = new AbortController();
      const port: ThreadPort = {
        ...thread,
        updateComment: (id, body) => {
          // The worker's shutdown, once the step's agent run is under way (it has asked the model).
          if (stopWhen(body)) void building.then(() => controller.abort(new HandOver()));
          return thread.updateComment(id, body);
        },
      };
      await followUpThread(deps, { port, actor: "maintainer", signal: controller.signal, deliveryId: "d" }, request);
      return controller.signal;
    };

    const stopped = await run((body) => body.includes("Building F1"));
    expect(handOverTaken(stopped)).toBe(true);
    const paused = fx.github.comments.find((c) => c.id === plan.id)!.body;
    expect(paused).toContain("Paused at a safe point");
    expect(stateOf(paused).followUp).toMatchObject({ status: "pending", paused: `comment:${fix.id}` });
    expect(fx.repo.log(BRANCH)[0]).toBe("S1: Add a retry helper");

    // The job, run again by another worker, goes on; run a third time (a stray redelivery), it does nothing.
    await run(() => false);
    expect(fx.repo.log(BRANCH)[0]).toBe("F1: `/fix` by @maintainer: document it");
    const head = fx.repo.head(BRANCH);
    await run(() => false);
    expect(fx.repo.head(BRANCH)).toBe(head);
    expect(stateOf(fx.github.comments.find((c) => c.id === plan.id)!.body).followUp).toMatchObject({
      status: "built",
      paused: null,
      handled: [`comment:${fix.id}`],
      steps: [{ id: "F1" }],
    });
  });
  it("stopped during a failing check's diagnosis, nothing is saved: the next worker looks at the failure afresh", async () => {
    let stop = () => {};
    await fx.start([
      call("write_file", { path: "src/retry.js", content: "export const retry = (fn) => fn();\n" }),
      call("complete_step", { step_id: "S1", summary: "Added it." }),
      // The worker's shutdown while the model diagnoses.
      () => (stop(), { hang: true }),
      call(
        "submit_plan",
        samplePlan({
          title: "retry makes one attempt",
          summary: "`retry` calls `fn` once; the test expects three attempts.",
          steps: [{ id: "S1", title: "Retry three times", details: "Loop `n` times.", files: ["src/retry.js"] }],
          verification: [],
        }),
      ),
    ]);
    const plan = fx.seedPlan(
      samplePlan({
        verification: [],
        steps: [{ id: "S1", title: "Add a retry helper", details: "", files: ["src/retry.js"], deps: [] }],
      }),
    );
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    const head = fx.repo.head(BRANCH);
    fx.github.pulls[0]!.headSha = head;
    fx.github.addCheckRun({
      name: "test",
      head_sha: head,
      external_id: null,
      app: ACTIONS,
      conclusion: "failure",
      output: { title: "1 test failed", summary: "retries three times" },
    });
    const { deps, thread } = worker();
    const onPullRequest = () => fx.github.otherComments.filter((c) => c.number === 100).map((c) => c.body);
    const planBody = () => fx.github.comments.find((c) => c.id === plan.id)!.body;
    const run = async () => {
      const controller = new AbortController();
      stop = () => controller.abort(new HandOver());
      const job = { port: thread, actor: "github-actions[bot]", signal: controller.signal, deliveryId: "d" };
      await followFailingChecks(deps, job, { pullRequest: 100, headSha: head, app: ACTIONS });
      return controller.signal;
    };

    const before = planBody();
    const stopped = await run();
    expect(handOverTaken(stopped)).toBe(true);
    // Nothing saved and nothing said: no F-step, and the commit is not recorded as looked at.
    expect(planBody()).toBe(before);
    expect(onPullRequest()).toEqual([]);

    // The job, run again by another worker, diagnoses the failure; run a third time (a redelivery), it does nothing.
    await run();
    expect(onPullRequest()).toHaveLength(1);
    expect(onPullRequest()[0]).toContain("**F1** (Retry three times) waits in the plan comment");
    const requests = fx.model.requests.length;
    await run();
    expect(fx.model.requests).toHaveLength(requests);
    expect(onPullRequest()).toHaveLength(1);
    expect(stateOf(planBody()).followUp).toMatchObject({ handled: [`checks:${head}`], steps: [{ id: "F1" }] });
  });
});
