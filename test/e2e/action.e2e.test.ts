import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "vitest";
import { startModelServer, type ModelServer } from "../helpers/model-server.js";
import { startGitHubDouble, type GitHubDouble } from "./double/github-server.js";
import type { CommentRecord } from "./double/state.js";
import { checkSuiteCompleted, issueCommentCreated } from "./double/webhooks.js";
import { ACTION_BUNDLE, createActionsRunner, type ActionStep, type ActionsRunner } from "./support/actions-runner.js";
import {
  DIAGNOSIS_STEP,
  FILES,
  GREET_JS,
  greeterScript,
  INDEX_JS,
  PLAN,
  STEP_COMMITS,
  stepOf,
} from "./support/greeter-scenario.js";

/**
 * The GitHub Action as a runner runs it — `node dist/index.js`, the committed bundle, with the
 * event file, INPUT_* and GITHUB_* set — against a local GitHub (REST under /api/v3, git over
 * smart HTTP) and a scripted model: /plan → plan comment and outputs → /build → commits pushed →
 * pull request → boxes ticked → another CI's failed check suite on it → an F-step; a model that is down fails the
 * step and says so on the issue.
 */

const MODEL_KEY = "sk-e2e-action-model-key-000000000000";
/** GITHUB_TOKEN is an installation token of the `github-actions` app: its comments are by github-actions[bot]. */
const ACTIONS_BOT = "github-actions[bot]";
const BRANCH = "blueprint/issue-1";

describe("the GitHub Action, run as `node dist/index.js` by a runner, against a local GitHub", () => {
  let github: GitHubDouble;
  let model: ModelServer;
  let brokenModel: ModelServer;
  let runner: ActionsRunner;
  let token: string;
  let baseSha: string;
  let planComment: CommentRecord;
  const steps: ActionStep[] = [];

  beforeAll(async () => {
    if (!existsSync(ACTION_BUNDLE))
      throw new Error(`${ACTION_BUNDLE} is missing: the Action's bundle is committed (npm run build:action makes it).`);
    github = await startGitHubDouble({
      appSlug: "github-actions",
      files: FILES,
      issues: [
        {
          title: "Greet people by name",
          body: "The CLI always says hello to the world. It should greet whoever is named.",
          author: "octocat",
        },
        { title: "Say goodbye too", body: "After the greeting, say goodbye.", author: "octocat" },
      ],
      permissions: { maintainer: "write" },
    });
    token = github.issueInstallationToken();
    baseSha = github.repository.head("main") ?? "";
    model = await startModelServer(greeterScript());
    brokenModel = await startModelServer(
      Array.from({ length: 10 }, () => ({ status: 500, body: { error: { message: "the model is down" } } })),
    );
    runner = createActionsRunner({
      github,
      token,
      // The workflow's `with:`; the rest keep action.yml's defaults.
      inputs: {
        "openai-api-key": MODEL_KEY,
        "openai-base-url": model.url,
        model: "e2e-model",
        "state-secret": "e2e-state-secret-4c2a9e71",
      },
      // The job's `env:`: no retries against a scripted model.
      env: { BLUEPRINT_MODEL_RETRIES: "0" },
    });
  });

  afterAll(async () => {
    runner?.cleanup();
    await model?.close();
    await brokenModel?.close();
    await github?.stop();
  });

  const diagnostics = () =>
    [
      "--- requests the GitHub double saw ---",
      ...github.requests.map(
        (r) =>
          `${new Date(r.at ?? 0).toISOString().slice(11, 23)} ${r.status} ${r.kind} ${r.method} ${r.path} (${r.auth}${r.operationId ? `, ${r.operationId}` : ""})`,
      ),
      "--- violations ---",
      JSON.stringify(github.violations, null, 2),
      ...steps.flatMap((step, n) => [
        `--- step ${n + 1}: exit ${step.code}, stdout ---`,
        step.stdout.slice(-6000),
        "--- stderr ---",
        step.stderr.slice(-3000),
      ]),
    ].join("\n");

  /** A comment typed on GitHub by `login`, then the workflow run it starts. */
  async function comment(
    issue: number,
    login: string,
    body: string,
    options: Parameters<ActionsRunner["run"]>[1] = {},
  ): Promise<{ typed: CommentRecord; step: ActionStep }> {
    const typed = github.state.addUserComment(issue, login, body);
    const step = await runner.run(issueCommentCreated(github, typed), options);
    steps.push(step);
    return { typed, step };
  }

  it("/plan: 👀, Plan v1 with a task list and the hidden state, outputs status and plan-url, a job summary", async () => {
    onTestFailed(() => console.error(diagnostics()));
    const { typed, step } = await comment(1, "maintainer", "/plan greet by name\nKeep it small.");

    expect(step.code).toBe(0);
    expect(github.state.reactions).toContainEqual(
      expect.objectContaining({
        commentId: typed.id,
        content: "eyes",
        user: expect.objectContaining({ login: ACTIONS_BOT }),
      }),
    );
    const bot = github.state.botComments(1);
    expect(bot).toHaveLength(1);
    planComment = bot[0] as CommentRecord;
    expect(planComment.user.login).toBe(ACTIONS_BOT);
    expect(planComment.body).toContain("Plan v1");
    expect(planComment.body).toContain("- [ ] **S1** Add a greet helper");
    expect(planComment.body).toContain("- [ ] **S2** Greet by name in the entry point");
    expect(planComment.body).toContain("<!-- blueprint:state");
    // Planning only read: nothing was pushed.
    expect(github.repository.head(BRANCH)).toBeNull();
    expect(github.requests.filter((r) => r.gitService === "git-receive-pack")).toEqual([]);
    // The model got the instructions and was offered no write tools.
    expect(JSON.stringify(model.requests[0]?.messages)).toContain("greet by name");
    const offered = model.requests[0]?.tools?.map((tool) => tool.function.name) ?? [];
    expect(offered).toContain("submit_plan");
    expect(offered).not.toContain("write_file");

    const planUrl = `${github.htmlUrl}/issues/1#issuecomment-${planComment.id}`;
    expect(step.outputs).toEqual({ status: "pending", "plan-url": planUrl, "pr-url": "", branch: "" });
    expect(step.summary).toContain("## Blueprint");
    expect(step.summary).toContain("octo-org/hello-world#1");
    expect(step.summary).toContain("`pending`");
    expect(step.summary).toContain(`[v1: ${PLAN.title}](${planUrl})`);
    // Secrets are masked before anything could print them.
    expect(step.stdout).toContain(`::add-mask::${token}`);
    expect(step.stdout).toContain(`::add-mask::${MODEL_KEY}`);
    expect(step.stdout).not.toContain("::error::");
  });

  it("/build: one commit per step on blueprint/issue-1, a pull request, the boxes ticked, outputs pr-url and branch", async () => {
    onTestFailed(() => console.error(diagnostics()));
    expect(planComment, "the /plan walk must have produced a plan comment").toBeDefined();
    const { typed, step } = await comment(1, "maintainer", "/build");

    expect(step.code).toBe(0);
    expect(github.state.reactions).toContainEqual(expect.objectContaining({ commentId: typed.id, content: "eyes" }));
    expect(github.repository.log(BRANCH)).toEqual([...STEP_COMMITS, "initial commit"]);
    expect(github.repository.show(BRANCH, "src/greet.js")).toBe(GREET_JS);
    expect(github.repository.show(BRANCH, "src/index.js")).toBe(INDEX_JS);
    // Commits carry the token's account, not a global git identity.
    expect(github.repository.git(["log", "-1", "--format=%an <%ae>", `refs/heads/${BRANCH}`]).trim()).toBe(
      `${ACTIONS_BOT} <41898282+github-actions[bot]@users.noreply.github.com>`,
    );
    expect(github.repository.head("main")).toBe(baseSha);

    expect(github.state.pulls).toHaveLength(1);
    const pull = github.state.pulls[0];
    expect(pull).toMatchObject({
      head: BRANCH,
      base: "main",
      title: PLAN.title,
      state: "open",
      user: { login: ACTIONS_BOT },
    });
    expect(pull?.body).toContain("Closes #1");

    const plan = github.state.comment(planComment.id);
    expect(plan?.body).toContain("- [x] **S1** Add a greet helper");
    expect(plan?.body).toContain("- [x] **S2** Greet by name in the entry point");
    expect(plan?.body).toContain("<!-- blueprint:state");
    expect(plan?.body).not.toContain("❌");
    // Ticked as each step was pushed, not only at the end.
    expect(plan?.history.some((body) => body.includes("- [x] **S1**") && body.includes("- [ ] **S2**"))).toBe(true);
    expect(model.requests.map(stepOf).filter(Boolean)).toEqual(["S1", "S1", "S2", "S2"]);

    const pullUrl = `${github.htmlUrl}/pull/${pull?.number}`;
    expect(step.outputs).toEqual({
      status: "built",
      "plan-url": `${github.htmlUrl}/issues/1#issuecomment-${planComment.id}`,
      "pr-url": pullUrl,
      branch: BRANCH,
    });
    expect(step.summary).toContain("`built`");
    expect(step.summary).toContain(`\`${BRANCH}\``);
    expect(step.summary).toContain(pullUrl);
    expect(step.stdout).not.toContain("::error::");
  });

  it("a failed check suite of another CI on the pull request's head: a comment there, and an F-step for /fix", async () => {
    onTestFailed(() => console.error(diagnostics()));
    const pull = github.state.pulls[0];
    if (!pull) throw new Error("the /build walk must have opened a pull request");
    const ci = { id: 4242, slug: "ci-app" };
    const head = github.repository.head(BRANCH) ?? "";
    github.state.addCheckRun({
      name: "lint",
      headSha: head,
      externalId: null,
      status: "completed",
      conclusion: "failure",
      title: "2 problems",
      summary: "no-unused-vars",
      text: null,
      annotations: [
        {
          path: "src/greet.js",
          start_line: 1,
          end_line: 1,
          annotation_level: "failure",
          message: "'x' is defined but never used",
          title: "no-unused-vars",
        },
      ],
      actions: [],
      app: ci,
      completedAt: new Date().toISOString(),
    });
    const asked = model.requests.length;
    const step = await runner.run(checkSuiteCompleted(github, pull, { app: ci, conclusion: "failure" }));
    steps.push(step);

    expect(step.code).toBe(0);
    // `ci_fix: suggest` (the default): the model's read-only diagnosis, no push; the pull request is told, the
    // plan comment holds F1.
    expect(model.requests).toHaveLength(asked + 1);
    expect(github.repository.log(BRANCH)).toEqual([...STEP_COMMITS, "initial commit"]);
    const said = github.state.botComments(pull.number).at(-1)?.body ?? "";
    expect(said).toMatch(/A check fails on this pull request's head[\s\S]*\*\*lint\*\*: 2 problems/);
    expect(said).toContain("`src/greet.js:1` no-unused-vars");
    expect(said).toContain("`src/greet.js` declares `x` and never uses it");
    expect(said).toContain(`**F1** (${DIAGNOSIS_STEP}) waits in the plan comment`);
    expect(github.state.comment(planComment.id)?.body).toContain(`- [ ] **F1** ${DIAGNOSIS_STEP}`);
    expect(step.summary).toContain(
      `failed check suite of ci-app on \`${head.slice(0, 7)}\` (pull request #${pull.number})`,
    );
    expect(step.stdout).not.toContain("::error::");
  });

  it("fails the step when the model endpoint answers 500, and says why on the issue in plain words", async () => {
    onTestFailed(() => console.error(diagnostics()));
    const before = github.state.botComments(1).map((c) => c.body);
    const { step } = await comment(2, "maintainer", "/plan say goodbye after the greeting", {
      inputs: { "openai-base-url": brokenModel.url },
    });

    expect(step.code).toBe(1);
    expect(brokenModel.requests.length).toBeGreaterThan(0);
    expect(step.stdout).toMatch(/::error::Blueprint failed: .*HTTP 500/);
    const bot = github.state.botComments(2);
    expect(bot).toHaveLength(1);
    const failure = bot[0]?.body ?? "";
    expect(failure).toMatch(/^## ❌ Planning failed/);
    expect(failure).toContain(`Blueprint could not make a plan: the model endpoint at ${brokenModel.url}`);
    expect(failure).toContain("answered HTTP 500");
    expect(failure).toContain("**What to do:**");
    expect(failure).toContain("<!-- blueprint:state");
    expect(failure).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
    expect(step.outputs).toMatchObject({ status: "failed", "pr-url": "", branch: "" });
    expect(step.summary).toContain("octo-org/hello-world#2");
    expect(step.summary).toContain("### ❌ Failed");
    expect(step.summary).toContain("HTTP 500");
    // The other thread is untouched.
    expect(github.state.botComments(1).map((c) => c.body)).toEqual(before);
  });

  it("speaks to GitHub only through documented operations, with the job's token, and leaves no token behind", () => {
    onTestFailed(() => console.error(diagnostics()));
    expect(github.violations).toEqual([]);
    expect(github.unimplemented.map((r) => `${r.method} ${r.path}`)).toEqual([]);
    const rest = github.requests.filter((r) => r.kind === "rest");
    expect(rest.length).toBeGreaterThan(0);
    expect(rest.filter((r) => r.status >= 400).map((r) => `${r.status} ${r.method} ${r.path}`)).toEqual([]);
    // Only the token it was handed: no App JWT, no other installation.
    expect(
      rest
        .filter((r) => r.auth !== "installation-token" || r.installationId !== github.installationId)
        .map((r) => `${r.method} ${r.path} (${r.auth})`),
    ).toEqual([]);
    expect(github.issuedTokens()).toEqual([token]);
    // GraphQL is only used to minimize superseded comments, which these walks do not make.
    expect(github.requests.filter((r) => r.kind === "graphql" || r.kind === "other")).toEqual([]);

    const git = github.requests.filter((r) => r.kind === "git");
    expect(git.some((r) => r.gitService === "git-upload-pack")).toBe(true);
    expect(git.some((r) => r.gitService === "git-receive-pack")).toBe(true);
    expect(
      git
        .filter((r) => r.auth !== "installation-token" || r.status !== 200)
        .map((r) => `${r.status} ${r.method} ${r.path} (${r.auth})`),
    ).toEqual([]);

    // The token is on no file the jobs left (RUNNER_TEMP/blueprint, the mirror's git config included)…
    const secrets = [token, Buffer.from(`x-access-token:${token}`).toString("base64")];
    const files = runner.jobDirs.flatMap(filesUnder);
    expect(
      files.some((file) => file.includes(`${path.sep}blueprint${path.sep}`) && path.basename(file) === "config"),
    ).toBe(true);
    expect(files.filter((file) => secrets.some((secret) => readFileSync(file).includes(secret)))).toEqual([]);
    // …and in no log line but the one that masks it.
    const logLines = steps.flatMap((step) => `${step.stdout}\n${step.stderr}`.split("\n"));
    expect(
      logLines.filter(
        (line) => [...secrets, MODEL_KEY].some((secret) => line.includes(secret)) && !line.startsWith("::add-mask::"),
      ),
    ).toEqual([]);
    // Nothing secret reached GitHub's pages.
    const published = [
      ...github.state.comments.flatMap((c) => c.history),
      ...github.state.pulls.map((p) => p.body),
    ].join("\n");
    for (const secret of [...secrets, MODEL_KEY]) expect(published).not.toContain(secret);
  });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(full);
    return entry.isFile() && statSync(full).size < 20_000_000 ? [full] : [];
  });
}
