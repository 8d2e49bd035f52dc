import nock from "nock";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { coreIo } from "../../src/action/io.js";
import { createActionOctokit, type ActionOctokitOptions } from "../../src/action/octokit.js";
import { runAction } from "../../src/action/runner.js";
import { checkSuitePayload } from "../helpers/app.js";
import { stateOf } from "../helpers/app-fixture.js";
import { createBareRepo, type BareRepo } from "../helpers/git-repo.js";
import {
  githubDouble,
  type GitHubDouble,
  type GitHubDoubleOptions,
  recordDelivered,
} from "../helpers/github-double.js";
import { samplePlan, startModelServer, type ModelServer, type Script } from "../helpers/model-server.js";
import { pendingState, planCommentBody, testSeal } from "../helpers/plan-state.js";
import { commentEvent, stepFiles, workflowRunEvent, type StepFiles } from "./support.js";

/**
 * The Action on `workflow_run` and `check_suite`: the App's failing-checks follow-up, run with the workflow's token. As
 * GitHub has it, that token's app (GitHub Actions) writes Blueprint's check runs and every CI job's alike.
 */

const FILES = {
  "README.md": "# Hello\n",
  "src/client.js": "export async function get(url) {\n  return fetch(url);\n}\n",
};
const BRANCH = "blueprint/issue-1";
const ACTIONS = { id: 15368, slug: "github-actions" };
const LOG = ["##[group]Run npm test", ...Array.from({ length: 300 }, (_, i) => `ok ${i}`)].join("\n");
const FAILED_LOG = `${LOG}\nFAIL test/retry.test.js > retries three times\nError: expected 3 attempts, got 1\n`;

const onePlan = samplePlan({
  verification: ["test -f src/retry.js"],
  steps: [{ id: "S1", title: "Add a retry helper", details: "Create src/retry.js", files: ["src/retry.js"], deps: [] }],
});
const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }] });
const BUILD_S1 = [
  call("write_file", { path: "src/retry.js", content: "export const retry = (fn) => fn();\n" }),
  call("complete_step", { step_id: "S1", summary: "Added it." }),
];
/** The model's read-only diagnosis of a failing check: one fix-up step with the title given. */
const diagnosis = (title: string) =>
  call(
    "submit_plan",
    samplePlan({
      title: "the check fails",
      summary: "The failure comes from `retry` making one attempt.",
      steps: [{ id: "S1", title, details: "Make it pass.", files: ["src/retry.js"] }],
      verification: [],
    }),
  );
const BUILD_F1 = [
  diagnosis("Retry three times"),
  call("write_file", { path: "src/retry.js", content: "export const retry = (fn, n = 3) => fn();\n" }),
  call("complete_step", { step_id: "F1", summary: "Three attempts." }),
];

describe("the Action follows up failing checks on Blueprint's pull request", () => {
  let repo: BareRepo;
  let github: GitHubDouble;
  let doubleOptions: GitHubDoubleOptions;
  const models: ModelServer[] = [];

  beforeEach(() => {
    nock.disableNetConnect();
    nock.enableNetConnect("127.0.0.1");
    // Keep @actions/core's workflow commands out of the test output.
    vi.spyOn(process.stdout, "write").mockImplementation(() => true);
  });

  afterEach(async () => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
    process.exitCode = undefined;
    await Promise.all(models.splice(0).map((model) => model.close()));
    nock.cleanAll();
    nock.enableNetConnect();
  });

  /** One run of the Action on an event, with the workflow's token (github-actions[bot]) against the double. */
  async function run(script: Script, eventName: string, event: unknown, env: Record<string, string> = {}) {
    const model = await startModelServer(script);
    models.push(model);
    const step: StepFiles = stepFiles(
      eventName,
      event,
      { "openai-base-url": model.url, model: "test-model" },
      {
        GITHUB_API_URL: "https://api.github.com",
        GITHUB_WORKFLOW_REF: "Codertocat/Hello-World/.github/workflows/blueprint.yml@refs/heads/main",
        ...env,
      },
    );
    const createOctokit = (options: ActionOctokitOptions) => createActionOctokit({ ...options, paced: false });
    // GitHub has the comment the event is about (Blueprint reads a /build back before it builds).
    recordDelivered(eventName, event);
    const result = await runAction({ env: step.env, io: coreIo(step.env), createOctokit });
    return { step, result, model };
  }

  /** A plan on issue #1 built by the Action with `/build`: branch blueprint/issue-1 and pull request #100 on it. */
  async function builtPullRequest(config?: string) {
    repo = createBareRepo(config ? { ...FILES, ".github/blueprint.yml": config } : FILES);
    doubleOptions = { permissions: { maintainer: "write" }, bot: { login: "github-actions[bot]", app: ACTIONS } };
    github = githubDouble(doubleOptions);
    const plan = github.addBotComment((id) =>
      planCommentBody(pendingState(onePlan, { base: { branch: "main", sha: repo.head() } }), testSeal(id)),
    );
    const built = await run(
      BUILD_S1,
      "issue_comment",
      commentEvent({ body: "/build", cloneUrl: repo.url, commentId: 6000 }),
    );
    expect(built.result).toEqual({ status: "built", failed: false });
    const pull = github.pulls[0]!;
    expect(pull.head).toBe(BRANCH);
    pull.headSha = repo.head(BRANCH);
    return { plan, pull, headSha: pull.headSha };
  }

  /** The CI workflow's `test` job failed on `sha`: an annotation and its log, as GitHub Actions writes them. */
  const failTests = (sha: string) =>
    github.addCheckRun({
      name: "test",
      head_sha: sha,
      external_id: "8f1c2d3e-ci-job",
      app: ACTIONS,
      conclusion: "failure",
      output: { title: "1 test failed", summary: "retries three times" },
      annotations: [{ path: "src/retry.js", start_line: 1, title: "retries three times", message: "got 1" }],
      log: FAILED_LOG,
    });
  const ciFailed = (sha: string, overrides: Partial<Parameters<typeof workflowRunEvent>[0]> = {}) =>
    workflowRunEvent({ cloneUrl: repo.url, headSha: sha, headBranch: BRANCH, pullRequest: 100, ...overrides });
  const onPullRequest = () => github.otherComments.filter((c) => c.number === 100).map((c) => c.body);
  const writes = () => github.requests.filter((r) => r.method !== "GET");

  it("`ci_fix: build`: a failed workflow run on the head is fixed on the same branch, and the same failure stops it", async () => {
    const { plan, headSha } = await builtPullRequest("ci_fix: build\n");
    failTests(headSha);
    // Blueprint's own failed check, written with the same token: the same app as CI's jobs, told apart by its id.
    github.addCheckRun({
      name: "Blueprint build",
      head_sha: headSha,
      external_id: "blueprint-build:#1:v1",
      app: ACTIONS,
      conclusion: "failure",
    });

    const { step, result, model } = await run(BUILD_F1, "workflow_run", ciFailed(headSha));

    expect(result).toEqual({ status: "built", failed: false });
    expect(repo.log(BRANCH).slice(0, 2)).toEqual(["F1: Retry three times", "S1: Add a retry helper"]);
    // The model's read-only diagnosis is told the failing check's output, as untrusted input.
    const task = (model.requests[0]?.messages ?? []).map((message) => String(message.content)).join("\n");
    expect(task).toContain('<untrusted_input check="test">');
    expect(task).toContain("Error: expected 3 attempts, got 1");
    expect(task).not.toContain("Blueprint build");
    expect(onPullRequest().at(-1)).toContain("Building **F1** to fix it (attempt 1 of 2).");
    const fix = repo.head(BRANCH);
    expect(stateOf(github.comments.find((c) => c.id === plan.id)!.body).followUp?.ci).toMatchObject({
      attempts: 1,
      fixes: [{ pushed: fix }],
    });
    expect(step.summary()).toContain(`failed workflow run "CI" on \`${headSha.slice(0, 7)}\` (pull request #100)`);

    // The same run again (a re-run's event): that head was looked at.
    const comments = onPullRequest().length;
    const again = await run([], "workflow_run", ciFailed(headSha));
    expect(again.result.failed).toBe(false);
    expect(again.model.requests).toHaveLength(0);
    expect(onPullRequest()).toHaveLength(comments);

    // The fix fails the same way (its CI ran: pushed with a token whose pushes start workflows): no second attempt.
    github.pulls[0]!.headSha = fix;
    failTests(fix);
    const stopped = await run([], "workflow_run", ciFailed(fix));
    expect(stopped.model.requests).toHaveLength(0);
    expect(repo.head(BRANCH)).toBe(fix);
    expect(onPullRequest().at(-1)).toContain(
      `Blueprint stopped: commit \`${fix.slice(0, 7)}\` was its fix for this very failure`,
    );
  });

  it("`ci_fix: suggest` (the default): another app's failed check suite gets a comment and an F-step for `/fix`", async () => {
    const { headSha } = await builtPullRequest();
    const ci = { id: 4242, slug: "ci-app" };
    github.addCheckRun({
      name: "lint",
      head_sha: headSha,
      external_id: null,
      app: ci,
      conclusion: "failure",
      output: { title: "2 problems", summary: "no-unused-vars" },
    });
    const suite = checkSuitePayload({ headSha, headBranch: BRANCH, pullRequest: 100, cloneUrl: repo.url, app: ci });

    const { result, model } = await run([diagnosis("Remove the unused variable")], "check_suite", suite);

    expect(result.failed).toBe(false);
    // Only the diagnosis asked the model: nothing was built.
    expect(model.requests).toHaveLength(1);
    expect(repo.log(BRANCH)[0]).toBe("S1: Add a retry helper");
    expect(onPullRequest().at(-1)).toMatch(/A check fails on this pull request's head[\s\S]*\*\*lint\*\*: 2 problems/);
    expect(onPullRequest().at(-1)).toContain("**F1** (Remove the unused variable) waits in the plan comment");
  });

  it("starts nothing for a success, another pull request, or Blueprint's own workflow", async () => {
    const { headSha } = await builtPullRequest("ci_fix: build\n");
    failTests(headSha);
    const before = { writes: writes().length, requests: github.requests.length };

    const success = await run([], "workflow_run", ciFailed(headSha, { conclusion: "success" }));
    expect(success.result).toEqual({ status: "skipped", failed: false });
    const own = await run([], "workflow_run", ciFailed(headSha, { path: ".github/workflows/blueprint.yml" }));
    expect(own.result).toEqual({ status: "skipped", failed: false });
    // A run on an older commit than its pull request's head (the payload names the pull request's head).
    const older = ciFailed(repo.head());
    older.workflow_run.pull_requests[0].head.sha = headSha;
    const stale = await run([], "workflow_run", older);
    expect(stale.result).toEqual({ status: "skipped", failed: false });
    // None of these events reached GitHub.
    expect(github.requests).toHaveLength(before.requests);

    // A failure on the head of pull request #7, which no Blueprint plan built: read, and nothing written.
    const foreign = await run([], "workflow_run", ciFailed(headSha, { pullRequest: 7, headBranch: "feature" }));
    expect(foreign.result.failed).toBe(false);
    expect(foreign.model.requests).toHaveLength(0);
    expect(writes()).toHaveLength(before.writes);
    expect(repo.log(BRANCH)[0]).toBe("S1: Add a retry helper");
  });

  it("says which permission to add when the token may not read check runs, or the jobs' logs", async () => {
    const { headSha } = await builtPullRequest();
    failTests(headSha);
    doubleOptions.checkReadsRefused = true;

    const refused = await run([], "workflow_run", ciFailed(headSha));

    expect(refused.result.failed).toBe(true);
    const advice = "add `checks: read` under the workflow's `permissions:`";
    expect(refused.step.summary()).toContain("### ⚠️ Permissions the workflow's token lacks");
    expect(refused.step.summary()).toContain(
      `GitHub refused (403) to list the commit's check runs with the workflow's token: ${advice}`,
    );
    // The thread is told in the same words, not GitHub's "Resource not accessible by integration".
    expect(github.botComments().at(-1)?.body).toContain("the workflow's token needs `checks: read`");

    // Check runs readable, logs not: the follow-up goes on without them, and the summary says what to add.
    doubleOptions.checkReadsRefused = false;
    doubleOptions.jobLogsRefused = true;
    const newHead = repo.commit({ "docs.md": "x\n" }, "docs", BRANCH);
    github.pulls[0]!.headSha = newHead;
    failTests(newHead);
    const noLogs = await run([], "workflow_run", ciFailed(newHead));
    expect(noLogs.result.failed).toBe(false);
    expect(onPullRequest().at(-1)).toContain("waits in the plan comment");
    expect(noLogs.step.summary()).toContain(
      "GitHub refused (403) to read GitHub Actions jobs' logs with the workflow's token: add `actions: read` under the workflow's `permissions:`.",
    );
  });
});
