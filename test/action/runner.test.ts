import nock from "nock";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { coreIo } from "../../src/action/io.js";
import { createActionOctokit, type ActionOctokitOptions } from "../../src/action/octokit.js";
import { runAction } from "../../src/action/runner.js";
import { readStateMarker } from "../../src/github/state-marker.js";
import {
  ACTIONS_BOT,
  ACTIONS_TOKEN,
  actionsGitHubDouble,
  type ActionsGitHubDouble,
} from "../helpers/actions-github.js";
import { createBareRepo, gitIn, type BareRepo } from "../helpers/git-repo.js";
import { samplePlan, startModelServer, type ModelServer, type Script } from "../helpers/model-server.js";
import { pendingState, planCommentBody, testSeal } from "../helpers/plan-state.js";
import { commentEvent, MODEL_KEY, reviewEvent, stepFiles, type StepFiles } from "./support.js";

const write = (path: string, content: string) => ({
  toolCalls: [{ name: "write_file", arguments: { path, content } }],
});
const complete = (id: string) => ({
  toolCalls: [{ name: "complete_step", arguments: { step_id: id, summary: `did ${id}` } }],
});
const FILES = {
  "README.md": "# Hello\n",
  "src/client.js": "export async function get(url) {\n  return fetch(url);\n}\n",
};

/** The one item of a list (failing the test when there are more or none). */
function only<T>(items: T[]): T {
  expect(items).toHaveLength(1);
  const [item] = items;
  if (item === undefined) throw new Error("expected one item");
  return item;
}

describe("the Action runner", () => {
  let repo: BareRepo;
  let github: ActionsGitHubDouble;
  let model: ModelServer | null = null;
  let stdout: string[];

  beforeEach(() => {
    nock.disableNetConnect();
    nock.enableNetConnect("127.0.0.1");
    repo = createBareRepo(FILES);
    github = actionsGitHubDouble({ permissions: { maintainer: "write", reader: "read" } });
    stdout = [];
    // @actions/core speaks to the runner through stdout (masks, errors); keep it for assertions.
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
      stdout.push(String(chunk));
      return true;
    });
  });

  const modelRequests = () => model?.requests ?? [];

  afterEach(async () => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
    process.exitCode = undefined;
    await model?.close();
    model = null;
    nock.cleanAll();
    nock.enableNetConnect();
  });

  /** `paced`: GitHub's one-second spacing of writes, as in production; the other tests skip the wait. */
  async function run(
    script: Script,
    event: unknown,
    paced = false,
    eventName = "issue_comment",
    inputs: Record<string, string> = {},
  ): Promise<{ step: StepFiles; result: Awaited<ReturnType<typeof runAction>> }> {
    model = await startModelServer(script);
    const step = stepFiles(eventName, event, { "openai-base-url": model.url, model: "test-model", ...inputs });
    const createOctokit = (options: ActionOctokitOptions) => createActionOctokit({ ...options, paced });
    const result = await runAction({ env: step.env, io: coreIo(step.env), createOctokit });
    return { step, result };
  }

  it("plans from an issue comment: plan posted, outputs set, summary written, secrets masked", async () => {
    const { step, result } = await run(
      [
        { toolCalls: [{ name: "read_file", arguments: { path: "src/client.js" } }] },
        { toolCalls: [{ name: "submit_plan", arguments: samplePlan() }] },
      ],
      commentEvent({ body: "/plan add retry to the HTTP client", cloneUrl: repo.url, commentId: 77 }),
      true,
    );

    expect(result).toEqual({ status: "pending", failed: false });
    expect(process.exitCode).toBeUndefined();
    expect(github.reactions).toEqual([{ commentId: 77, content: "eyes" }]);
    const plan = only(github.botComments());
    expect(plan.body).toMatch(/^## 📋 Plan v1: Add retry to the HTTP client/);
    expect(plan.body).toContain("- [ ] **S1** Add a retry helper");
    const marker = readStateMarker(plan.body, testSeal(plan.id));
    expect(marker.kind === "ok" && marker.state.base).toEqual({ branch: "main", sha: repo.head() });

    // GitHub was reached at GITHUB_API_URL with the github-token input.
    expect(github.requests.length).toBeGreaterThan(3);
    expect(
      github.requests.every(
        (request) => request.path.startsWith("/api/v3/") && request.authorization === `token ${ACTIONS_TOKEN}`,
      ),
    ).toBe(true);
    expect(JSON.stringify(modelRequests()[0]?.messages)).toContain("add retry to the HTTP client");

    expect(step.outputs()).toEqual({ status: "pending", "plan-url": plan.html_url, "pr-url": "", branch: "" });
    const summary = step.summary();
    expect(summary).toContain("## Blueprint");
    expect(summary).toContain("Codertocat/Hello-World#1");
    expect(summary).toContain(`[v1: Add retry to the HTTP client](${plan.html_url})`);
    expect(summary).toContain("`pending`");
    expect(stdout.join("")).toContain(`::add-mask::${ACTIONS_TOKEN}`);
    expect(stdout.join("")).toContain(`::add-mask::${MODEL_KEY}`);
  });

  it("fails the step when the model endpoint answers 500, with the plan comment saying why", async () => {
    const { step, result } = await run([{ status: 500 }], commentEvent({ body: "/plan", cloneUrl: repo.url }));

    expect(result).toEqual({ status: "failed", failed: true });
    expect(process.exitCode).toBe(1);
    expect(only(github.botComments()).body).toMatch(/^## ❌ Planning failed/);
    expect(step.outputs().status).toBe("failed");
    expect(stdout.join("")).toMatch(/::error::Blueprint failed: .*HTTP 500/);
    expect(step.summary()).toContain("### ❌ Failed");
    expect(step.summary()).toMatch(/HTTP 500/);
  });

  it("builds an approved plan: a branch with one commit per step, a pull request, its url as an output", async () => {
    github.addBotComment((id) =>
      planCommentBody(pendingState(samplePlan(), { base: { branch: "main", sha: repo.head() } }), testSeal(id)),
    );
    const { step, result } = await run(
      [
        write("src/retry.js", "export const retry = (fn) => fn();\n"),
        complete("S1"),
        write("src/client.js", "// uses retry\n"),
        complete("S2"),
      ],
      // The command comes after the plan it approves (GitHub's comment ids grow).
      commentEvent({ body: "/build", cloneUrl: repo.url, commentId: 6000 }),
    );

    expect(result).toEqual({ status: "built", failed: false });
    expect(repo.log("blueprint/issue-1").slice(0, 2)).toEqual([
      "S2: Use the helper in the client",
      "S1: Add a retry helper",
    ]);
    expect(github.pulls).toHaveLength(1);
    expect(step.outputs()).toMatchObject({
      status: "built",
      branch: "blueprint/issue-1",
      "pr-url": only(github.pulls).html_url,
    });
    expect(step.summary()).toContain(only(github.pulls).html_url);
    // With the job's token the Action labels the issue as the App does: `npm test` fails here (no package.json), so not
    // "built".
    expect(github.threadLabels).toEqual(["blueprint: failed"]);
    expect(github.labels).toEqual(["blueprint: approved", "blueprint: building", "blueprint: failed"]);
  });

  it("a /build deleted before the workflow's job ran builds nothing, and says why on the thread", async () => {
    github.addBotComment((id) =>
      planCommentBody(pendingState(samplePlan(), { base: { branch: "main", sha: repo.head() } }), testSeal(id)),
    );
    github.deleteComment(6000);
    const { result } = await run(
      [write("src/retry.js", "x\n"), complete("S1")],
      commentEvent({ body: "/build", cloneUrl: repo.url, commentId: 6000 }),
    );

    expect(modelRequests()).toHaveLength(0);
    expect(() => repo.head("blueprint/issue-1")).toThrow();
    expect(github.botComments().at(-1)!.body).toMatch(
      /^@maintainer's `\/build` is no longer on this thread \(it was deleted before its build started\), so nothing is built\./,
    );
    expect(result.status).toBe("pending");
  });

  it("stops a build at the max-cost input, with what was built pushed and the step failed saying so", async () => {
    // test-model at $2 per million prompt and $10 per million completion tokens: each request costs $0.03, so S1 costs
    // $0.06.
    repo.commit(
      { ".github/blueprint.yml": "prices:\n  test-model: { input: 2, cached_input: 0.5, output: 10 }\n" },
      "prices",
    );
    github.addBotComment((id) =>
      planCommentBody(pendingState(samplePlan(), { base: { branch: "main", sha: repo.head() } }), testSeal(id)),
    );
    const usage = { prompt: 10_000, completion: 1_000 };
    const { step, result } = await run(
      [
        { ...write("src/retry.js", "x\n"), usage },
        { ...complete("S1"), usage },
        { ...write("src/client.js", "y\n"), usage },
        { ...complete("S2"), usage },
      ],
      commentEvent({ body: "/build", cloneUrl: repo.url, commentId: 6000 }),
      false,
      "issue_comment",
      { "max-cost": "0.05" },
    );

    expect(result).toEqual({ status: "failed", failed: true });
    expect(repo.log("blueprint/issue-1").slice(0, 2)).toEqual(["S1: Add a retry helper", "prices"]);
    expect(modelRequests()).toHaveLength(2);
    expect(github.pulls).toHaveLength(0);
    expect(only(github.botComments()).body).toContain(
      "the build reached its cost cap of $0.05 ($0.06 spent); S2 not built yet",
    );
    expect(step.outputs().status).toBe("failed");
  });

  it("fails the step in GitHub's words when the token may not write to the issue", async () => {
    // A workflow without `issues: write`: every write is refused, reads work.
    nock.cleanAll();
    nock("https://ghes.example.test")
      .persist()
      .intercept(/\/issues\/.*/, "POST")
      .reply(403, { message: "Resource not accessible by integration" })
      .intercept(/\/issues\/comments\/\d+$/, "PATCH")
      .reply(403, { message: "Resource not accessible by integration" });
    github = actionsGitHubDouble({ permissions: { maintainer: "write" } });
    const { step, result } = await run(
      [{ toolCalls: [{ name: "submit_plan", arguments: samplePlan() }] }],
      commentEvent({ body: "/plan", cloneUrl: repo.url }),
    );

    expect(result.failed).toBe(true);
    expect(process.exitCode).toBe(1);
    expect(stdout.join("")).toMatch(/::error::Blueprint failed: .*Resource not accessible by integration/);
    expect(step.summary()).toContain("### ❌ Failed");
  });

  it("only trusts state markers in comments by the token's own account", async () => {
    // Someone pastes a plan comment, marker and all: it must not be buildable.
    github.addUserComment(
      "maintainer",
      planCommentBody(
        pendingState(samplePlan(), { base: { branch: "main", sha: repo.head() } }),
        testSeal(github.comments.length + 5000),
      ),
    );
    const { step, result } = await run([], commentEvent({ body: "/build", cloneUrl: repo.url }));

    expect(result).toEqual({ status: "none", failed: false });
    expect(modelRequests()).toHaveLength(0);
    expect(github.botComments().map((comment) => comment.body)).toEqual([
      "There is no plan to build here yet. Comment `/plan` first.",
    ]);
    expect(only(github.botComments()).user.login).toBe(ACTIONS_BOT);
    expect(step.outputs().status).toBe("none");
    expect(step.summary()).toContain("> There is no plan to build here yet.");
  });

  it("builds on an approving review: commits on the pull request's branch, its url as an output", async () => {
    const headSha = repo.commit({ "docs/feature.md": "feature\n" }, "feature work", "feature");
    gitIn(repo.bare, ["update-ref", "refs/pull/2/head", headSha]);
    nock.cleanAll();
    github = actionsGitHubDouble({
      number: 2,
      permissions: { maintainer: "write" },
      pullRequest: { headRef: "feature", headSha, baseRef: "main" },
    });
    github.addBotComment((id) =>
      planCommentBody(
        pendingState(samplePlan(), {
          base: { branch: "main", sha: repo.head() },
          head: { ref: "feature", sha: headSha, sameRepo: true },
        }),
        testSeal(id, 2),
      ),
    );
    const event = reviewEvent({ cloneUrl: repo.url, state: "approved" });
    event.review.commit_id = headSha;
    const { step, result } = await run(
      [
        write("src/retry.js", "export const retry = (fn) => fn();\n"),
        complete("S1"),
        write("src/client.js", "// uses retry\n"),
        complete("S2"),
      ],
      event,
      false,
      "pull_request_review",
    );

    expect(result).toEqual({ status: "built", failed: false });
    expect(repo.log("feature").slice(0, 3)).toEqual([
      "S2: Use the helper in the client",
      "S1: Add a retry helper",
      "feature work",
    ]);
    expect(step.outputs()).toEqual({
      status: "built",
      "plan-url": github.comments[0]?.html_url,
      "pr-url": `${github.htmlUrl}/pull/2`,
      branch: "feature",
    });
  });

  /**
   * An approving review of a plan on pull request #2 from `feature`, built by the Action with a token that may or may
   * not write checks.
   */
  async function buildPullRequest(checks: "write" | "none") {
    const headSha = repo.commit({ "docs/feature.md": "feature\n" }, "feature work", "feature");
    gitIn(repo.bare, ["update-ref", "refs/pull/2/head", headSha]);
    nock.cleanAll();
    github = actionsGitHubDouble({
      number: 2,
      permissions: { maintainer: "write" },
      pullRequest: { headRef: "feature", headSha, baseRef: "main" },
      checks,
    });
    github.addBotComment((id) =>
      planCommentBody(
        pendingState(samplePlan({ verification: ["test -f src/retry.js"] }), {
          base: { branch: "main", sha: repo.head() },
          head: { ref: "feature", sha: headSha, sameRepo: true },
        }),
        testSeal(id, 2),
      ),
    );
    const event = reviewEvent({ cloneUrl: repo.url, state: "approved" });
    event.review.commit_id = headSha;
    const script = [
      write("src/retry.js", "export const retry = (fn) => fn();\n"),
      complete("S1"),
      write("src/client.js", "// uses retry\n"),
      complete("S2"),
    ];
    return run(script, event, false, "pull_request_review");
  }

  it("writes the build check with its token, as the GitHub Actions app, on the branch's head", async () => {
    const { result } = await buildPullRequest("write");
    expect(result).toEqual({ status: "built", failed: false });
    const head = repo.head("feature");
    expect(github.checkRuns.find((check) => check.head_sha === head)).toMatchObject({
      name: "Blueprint build",
      status: "completed",
      conclusion: "success",
      app: { slug: "github-actions" },
    });
    expect(github.checkRuns.filter((check) => check.status !== "completed")).toEqual([]);
  });

  it("builds all the same with a token that may not write checks, saying so once", async () => {
    const { result } = await buildPullRequest("none");
    expect(result).toEqual({ status: "built", failed: false });
    expect(repo.log("feature")[0]).toBe("S2: Use the helper in the client");
    expect(github.requests.filter((request) => request.path.includes("/check-runs"))).toHaveLength(1);
    expect(
      stdout.filter((line) => line.startsWith("::warning::") && line.includes("may not write check runs")),
    ).toHaveLength(1);
  });

  it("runs an approval with no plan as a build job, which finds it is not addressed to Blueprint", async () => {
    nock.cleanAll();
    github = actionsGitHubDouble({
      number: 2,
      permissions: { maintainer: "write" },
      pullRequest: { headRef: "feature", headSha: repo.head(), baseRef: "main" },
    });
    const { step, result } = await run(
      [],
      reviewEvent({ cloneUrl: repo.url, state: "approved" }),
      false,
      "pull_request_review",
    );
    expect(result).toEqual({ status: "none", failed: false });
    // It looked at pull request #2 for a plan to approve, found none, and wrote nothing.
    expect(github.requests.map((request) => `${request.method} ${request.path.split("?")[0]}`)).toContain(
      "GET /api/v3/repos/Codertocat/Hello-World/pulls/2",
    );
    expect(github.requests.filter((request) => request.method !== "GET")).toEqual([]);
    expect(github.comments).toEqual([]);
    expect(modelRequests()).toHaveLength(0);
    expect(step.outputs()).toMatchObject({ status: "none" });
  });

  it("refuses a /plan from someone who may not command Blueprint: one reply, no 👀, no model", async () => {
    const { step, result } = await run(
      [],
      commentEvent({ body: "/plan add retry", cloneUrl: repo.url, login: "reader", commentId: 90 }),
    );
    expect(result).toEqual({ status: "none", failed: false });
    expect(github.reactions).toEqual([]);
    expect(modelRequests()).toHaveLength(0);
    expect(github.botComments().map((comment) => comment.body)).toEqual([
      "Sorry @reader, only people with write access (or higher) to this repository can command Blueprint.",
    ]);
    expect(step.summary()).toContain("> Sorry @reader");
  });

  it("answers a re-run of the workflow for the same /help again: a person asked again", async () => {
    const event = commentEvent({ body: "/help", cloneUrl: repo.url, commentId: 91 });
    await run([], event);
    await run([], event);
    // The second 👀 was already there (GitHub answers 200); outside a shared queue that is no replay.
    expect(github.reactions.filter((reaction) => reaction.commentId === 91)).toHaveLength(2);
    expect(github.botComments().filter((comment) => comment.body.includes("/plan"))).toHaveLength(2);
  });

  it("leaves a bot's comment alone: no permission check, no write, no model", async () => {
    const { step, result } = await run(
      [],
      commentEvent({ body: "/plan", cloneUrl: repo.url, login: "dependabot[bot]", userType: "Bot" }),
    );
    expect(result).toEqual({ status: "none", failed: false });
    expect(
      github.requests.filter((request) => request.method !== "GET" || request.path.includes("/permission")),
    ).toEqual([]);
    expect(modelRequests()).toHaveLength(0);
    expect(step.outputs().status).toBe("none");
  });

  it("fails the step in GitHub's own words when it cannot read the commenter's permission", async () => {
    nock.cleanAll();
    nock("https://ghes.example.test")
      .get(/\/collaborators\/maintainer\/permission$/)
      .reply(403, { message: "Resource not accessible by integration" });
    github = actionsGitHubDouble({ permissions: { maintainer: "write" } });
    const { result } = await run([], commentEvent({ body: "/plan", cloneUrl: repo.url }));
    expect(result).toEqual({ status: "error", failed: true });
    expect(stdout.join("")).toMatch(/::error::Blueprint could not run: Resource not accessible by integration/);
    expect(github.comments).toEqual([]);
    expect(modelRequests()).toHaveLength(0);
  });

  it("skips a dismissed review", async () => {
    const { result } = await run(
      [],
      reviewEvent({ cloneUrl: repo.url, state: "dismissed", action: "dismissed" }),
      false,
      "pull_request_review",
    );
    expect(result).toEqual({ status: "skipped", failed: false });
    expect(github.requests).toEqual([]);
  });

  it("skips an edited comment without calling GitHub or the model", async () => {
    const { step, result } = await run([], commentEvent({ body: "/plan", cloneUrl: repo.url, action: "edited" }));
    expect(result).toEqual({ status: "skipped", failed: false });
    expect(github.requests).toEqual([]);
    expect(modelRequests()).toHaveLength(0);
    expect(step.outputs()).toEqual({ status: "skipped" });
  });

  it("refuses an invalid input by name, before touching GitHub", async () => {
    model = await startModelServer([]);
    const step = stepFiles("issue_comment", commentEvent({ body: "/plan", cloneUrl: repo.url }), {
      "min-permission": "owner",
    });
    const result = await runAction({ env: step.env, io: coreIo(step.env) });
    expect(result.failed).toBe(true);
    expect(process.exitCode).toBe(1);
    expect(stdout.join("")).toMatch(/::error::Blueprint could not run: invalid settings: input min-permission:/);
    expect(github.requests).toEqual([]);
  });

  it("refuses to run without a state-secret, saying how to set one, before touching GitHub", async () => {
    model = await startModelServer([]);
    const step = stepFiles("issue_comment", commentEvent({ body: "/plan", cloneUrl: repo.url }), {
      "state-secret": "",
    });
    const result = await runAction({ env: step.env, io: coreIo(step.env) });
    expect(result).toEqual({ status: "error", failed: true });
    expect(stdout.join("")).toMatch(
      /::error::Blueprint could not run: the state-secret input is empty\..*secrets\.BLUEPRINT_STATE_SECRET/,
    );
    expect(github.requests).toEqual([]);
  });

  it("counts no marker in another bot's comment, even one signed for it", async () => {
    // Another App (or workflow account) posting a well-formed plan comment is not the token's account.
    const id = 7000;
    const now = new Date().toISOString();
    const body = planCommentBody(
      pendingState(samplePlan(), { base: { branch: "main", sha: repo.head() } }),
      testSeal(id),
    );
    github.comments.push({
      id,
      node_id: `IC_${id}`,
      body,
      user: { login: "other-app[bot]", type: "Bot" },
      html_url: `${github.htmlUrl}/issues/1#issuecomment-${id}`,
      created_at: now,
      updated_at: now,
    });
    const { result } = await run([], commentEvent({ body: "/build", cloneUrl: repo.url, commentId: 8000 }));
    expect(result).toEqual({ status: "none", failed: false });
    expect(modelRequests()).toHaveLength(0);
    expect(only(github.botComments()).body).toBe("There is no plan to build here yet. Comment `/plan` first.");
  });

  it("fails with a clear message when the event file is missing", async () => {
    model = await startModelServer([]);
    const step = stepFiles("issue_comment", {}, {}, { GITHUB_EVENT_PATH: "/nonexistent/event.json" });
    const result = await runAction({ env: step.env, io: coreIo(step.env) });
    expect(result).toEqual({ status: "error", failed: true });
    expect(stdout.join("")).toContain("could not read the event payload at /nonexistent/event.json");
  });
});
