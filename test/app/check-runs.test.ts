import { createPublicKey } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import nock from "nock";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startGitHubDouble, type GitHubDouble } from "../e2e/double/github-server.js";
import type { CheckRunRecord } from "../e2e/double/state.js";
import {
  checkActionPayload,
  commentPayload,
  settle,
  startTestApp,
  testPrivateKey,
  webhookExample,
  type TestApp,
} from "../helpers/app.js";
import { gitIn, tempDir } from "../helpers/git-repo.js";
import { APP_ID, INSTALLATION_ID } from "../helpers/github-double.js";
import { samplePlan, startModelServer, type ModelServer, type Script } from "../helpers/model-server.js";
import { isRunning, sleeper } from "../helpers/sleeper.js";

/**
 * A verification script that fails naming files and lines: two in the repository, one outside it, one that is not
 * there.
 */
const CHECK_SCRIPT = [
  "echo 'src/client.js:1:8: error: fetch is not retried'",
  "echo 'src/retry.js(1,14): error TS2304: Cannot find name'",
  "echo '/etc/passwd:1:1: not in the repository'",
  "echo 'src/missing.js:3:1: no such file'",
  "exit 1",
].join("\n");
const FILES = {
  "README.md": "# Hello\n",
  "src/client.js": "export const get = (url) => fetch(url);\n",
  "scripts/check.sh": `${CHECK_SCRIPT}\n`,
};
const write = (file: string, content: string) => ({
  toolCalls: [{ name: "write_file", arguments: { path: file, content } }],
});
const complete = (id: string) => ({
  toolCalls: [{ name: "complete_step", arguments: { step_id: id, summary: `did ${id}` } }],
});
const submit = (overrides: Record<string, unknown> = {}) => ({
  toolCalls: [{ name: "submit_plan", arguments: samplePlan({ verification: ["test -f src/retry.js"], ...overrides }) }],
});
const BUILD_STEPS: Script = [
  write("src/retry.js", "export const retry = (fn) => fn();\n"),
  complete("S1"),
  write("src/client.js", "export const get = (url) => retry(() => fetch(url));\n"),
  complete("S2"),
];

/**
 * The plan and build check runs on a pull request, against the GitHub double (requests checked
 * against GitHub's OpenAPI description) with real git: the in-process App, its Octokit pointed at the double.
 */
describe("check runs", () => {
  let github: GitHubDouble;
  let model: ModelServer;
  let app: TestApp;
  let work: string;

  beforeEach(() => {
    nock.disableNetConnect();
    nock.enableNetConnect("127.0.0.1");
  });
  afterEach(async () => {
    await model?.close();
    await github?.stop();
    rmSync(work, { recursive: true, force: true });
    nock.enableNetConnect();
  });

  /** The double with pull request #1 from `feature` (same repository), a model answering `script`, and the App. */
  async function start(script: Script, more: Record<string, string> = {}): Promise<void> {
    github = await startGitHubDouble({
      owner: "Codertocat",
      repo: "Hello-World",
      files: { ...FILES, ...more },
      appId: APP_ID,
      installationId: INSTALLATION_ID,
      appPublicKey: createPublicKey(testPrivateKey()),
      permissions: { maintainer: "write", reader: "read", alice: "write" },
      installationPermissions: {
        contents: "write",
        issues: "write",
        pull_requests: "write",
        checks: "write",
        metadata: "read",
      },
    });
    // A local clone of the served repository (git on a path, not over the double's HTTP: the double answers on this
    // event loop).
    work = tempDir();
    gitIn(work, ["clone", "-q", github.repository.dir, "."]);
    mkdirSync(path.join(work, "src"), { recursive: true });
    writeFileSync(path.join(work, "src/client.js"), "export const get = (url) => fetch(url, { keepalive: true });\n");
    gitIn(work, ["commit", "-qam", "Use keepalive"]);
    gitIn(work, ["push", "-q", "origin", "HEAD:refs/heads/feature"]);
    github.repository.git(["update-ref", "refs/pull/1/head", github.repository.head("feature") ?? ""]);
    github.state.addPull({
      head: "feature",
      base: "main",
      title: "Use keepalive",
      body: "",
      draft: false,
      user: { login: "maintainer", type: "User" },
    });
    model = await startModelServer(script);
    app = await startTestApp({ OPENAI_BASE_URL: model.url }, { baseUrl: github.apiUrl });
  }

  async function comment(login: string, body: string): Promise<void> {
    const made = github.state.addUserComment(1, login, body);
    await app.deliver(
      "issue_comment",
      commentPayload({ body, login, commentId: made.id, cloneUrl: github.cloneUrl, isPullRequest: true }),
    );
  }

  async function click(
    run: CheckRunRecord,
    identifier: string,
    by: { login: string; userType?: string; app?: { id: number; slug: string } },
  ): Promise<void> {
    const check = {
      id: run.id,
      name: run.name,
      externalId: run.externalId,
      headSha: run.headSha,
      app: by.app ?? run.app,
    };
    await app.deliver(
      "check_run",
      checkActionPayload({ identifier, login: by.login, userType: by.userType, cloneUrl: github.cloneUrl, check }),
    );
  }

  const checks = (name: string) => github.state.checkRuns.filter((run) => run.name === name);
  /** Revision `revision`'s plan check (its external id: `blueprint-plan:#1:v<revision>:<the plan's hash>`). */
  const planCheck = (revision: number) =>
    checks("Blueprint plan").find((run) => run.externalId?.startsWith(`blueprint-plan:#1:v${revision}:`));
  const botText = () =>
    github.state
      .botComments(1)
      .map((c) => c.body)
      .join("\n---\n");

  it("puts each plan revision's check on the head it was made for, with Build and Revise buttons; a permitted click builds it and the build check passes", async () => {
    await start([submit(), ...BUILD_STEPS]);
    const head = github.repository.head("feature");
    await comment("maintainer", "/plan add retries");

    const plan = planCheck(1);
    expect(plan).toMatchObject({
      headSha: head,
      status: "completed",
      conclusion: "neutral",
      title: "Plan v1 waits for approval",
    });
    expect(plan?.actions).toEqual([
      { label: "Build plan v1", identifier: "build", description: "Approve and build plan v1" },
      { label: "Revise", identifier: "revise", description: "Ask for changes before it is built" },
    ]);
    expect(plan?.summary).toContain("**S1** Add a retry helper");
    expect(plan?.summary).toContain("**S2** Use the helper in the client (after S1)");
    expect(plan?.summary).toContain("Estimated build cost");
    expect(plan?.summary).toContain("**Who may approve:** people with write access or higher.");

    await click(plan as CheckRunRecord, "build", { login: "maintainer" });

    expect(github.repository.log("feature").slice(0, 3)).toEqual([
      "S2: Use the helper in the client",
      "S1: Add a retry helper",
      "Use keepalive",
    ]);
    const built = github.repository.head("feature");
    const build = checks("Blueprint build");
    // On each pushed head in turn; the one on the pull request's head now is the one that completed.
    const final = build.find((run) => run.headSha === built);
    expect(final).toMatchObject({ status: "completed", conclusion: "success", externalId: "blueprint-build:#1:v1" });
    expect(final?.history[0]).toBe("in_progress/-");
    expect(final?.summary).toContain("**S2** Use the helper in the client");
    expect(build.filter((run) => run.status !== "completed")).toEqual([]);
    expect(planCheck(1)).toMatchObject({ conclusion: "success", actions: [] });
    expect(github.violations).toEqual([]);
  });

  it("builds once when Build is clicked twice at once: the second click, queued behind the first, says the plan is built", async () => {
    await start([submit(), ...BUILD_STEPS]);
    await comment("maintainer", "/plan add retries");
    const plan = planCheck(1) as CheckRunRecord;
    await Promise.all([click(plan, "build", { login: "maintainer" }), click(plan, "build", { login: "maintainer" })]);

    expect(github.repository.log("feature").slice(0, 3)).toEqual([
      "S2: Use the helper in the client",
      "S1: Add a retry helper",
      "Use keepalive",
    ]);
    // One plan, one build of two steps (two model turns each).
    expect(model.requests).toHaveLength(1 + 4);
    const said = github.state.botComments(1).map((c) => c.body);
    expect(
      said.filter((body) => body.startsWith("Queued: Blueprint is busy on this thread (building for @maintainer)")),
    ).toHaveLength(1);
    expect(said.at(-1)).toBe("This plan is already built. Comment `/plan` for new work.");
    expect(said.filter((body) => body.startsWith("### Build report"))).toHaveLength(1);
  });

  it("fails the build check when verification fails, with annotations where the output names the repository's files and lines", async () => {
    await start([submit({ verification: ["sh scripts/check.sh"] }), ...BUILD_STEPS]);
    await comment("maintainer", "/plan add retries");
    await click(planCheck(1) as CheckRunRecord, "build", { login: "maintainer" });

    const final = checks("Blueprint build").find((run) => run.headSha === github.repository.head("feature"));
    expect(final).toMatchObject({
      status: "completed",
      conclusion: "failure",
      title: "Built, but verification failed: 1 of 1 checks",
    });
    expect(final?.summary).toContain("Failed: `sh scripts/check.sh` (exit 1)");
    expect(final?.annotations.map((note) => [note.path, note.start_line, note.annotation_level, note.message])).toEqual(
      [
        ["src/client.js", 1, "failure", "error: fetch is not retried"],
        ["src/retry.js", 1, "failure", "error TS2304: Cannot find name"],
      ],
    );
    // Built but not verified: the plan check does not claim success.
    expect(planCheck(1)?.conclusion).toBe("neutral");
    expect(github.violations).toEqual([]);
  });

  /**
   * Plan v1, then a click on its Build button, cancelled once S1 is pushed and S2's command runs: the plan waits for
   * another /build.
   */
  async function buildStoppedAfterS1(more: Script): Promise<CheckRunRecord> {
    const command = sleeper();
    await start([
      submit(),
      write("src/retry.js", "export const retry = (fn) => fn();\n"),
      complete("S1"),
      { toolCalls: [{ name: "run_command", arguments: { command, timeout_s: 600 } }] },
      ...more,
    ]);
    await comment("maintainer", "/plan add retries");
    const run = planCheck(1) as CheckRunRecord;
    const payload = checkActionPayload({
      identifier: "build",
      login: "maintainer",
      cloneUrl: github.cloneUrl,
      check: { id: run.id, name: run.name, externalId: run.externalId, headSha: run.headSha, app: run.app },
    });
    await app.probot.receive({ id: "click-1", name: "check_run", payload } as never);
    await expect.poll(() => isRunning(command)).toBe(true);
    await comment("maintainer", "/cancel");
    await settle(app.blueprint);
    expect(github.repository.log("feature")[0]).toBe("S1: Add a retry helper");
    return run;
  }

  it("cancels the build check when the build is cancelled, keeping it on the head the build pushed", async () => {
    const run = await buildStoppedAfterS1([]);

    const pushed = github.repository.head("feature");
    expect(checks("Blueprint build").find((check) => check.headSha === pushed)).toMatchObject({
      status: "completed",
      conclusion: "cancelled",
    });
    // The one left behind on the head the build started from says where the check went.
    expect(checks("Blueprint build").find((check) => check.headSha === run.headSha)).toMatchObject({
      conclusion: "neutral",
      title: `Continued on ${pushed?.slice(0, 7)}`,
    });
    expect(planCheck(1)?.conclusion).toBe("neutral");
  });

  it("keeps a partly built plan's check working: its Build button resumes the build, and the check ends built on the commit the plan was made on", async () => {
    const run = await buildStoppedAfterS1([
      write("src/client.js", "export const get = (url) => retry(() => fetch(url));\n"),
      complete("S2"),
    ]);

    await click(planCheck(1) as CheckRunRecord, "build", { login: "maintainer" });

    expect(github.repository.log("feature").slice(0, 3)).toEqual([
      "S2: Use the helper in the client",
      "S1: Add a retry helper",
      "Use keepalive",
    ]);
    expect(planCheck(1)).toMatchObject({
      headSha: run.headSha,
      conclusion: "success",
      title: "Plan v1 is built",
      actions: [],
    });
  });

  it("supersedes a partly built plan's check when a revision comes, though the build moved the head on", async () => {
    const run = await buildStoppedAfterS1([submit({ title: "Add retry, with a test" })]);

    await comment("maintainer", "/revise add a test too");

    expect(planCheck(1)).toMatchObject({
      headSha: run.headSha,
      conclusion: "cancelled",
      title: "Superseded by plan v2",
      actions: [],
    });
    expect(planCheck(2)).toMatchObject({ conclusion: "neutral", title: "Plan v2 waits for approval" });
  });

  it("cancels the plan check when a revision follows a build that failed", async () => {
    const blocked = {
      toolCalls: [{ name: "complete_step", arguments: { step_id: "S1", outcome: "blocked", summary: "no" } }],
    };
    await start([submit(), write("src/retry.js", "// half\n"), blocked, submit({ title: "Add retry, with a test" })]);
    await comment("maintainer", "/plan add retries");
    await click(planCheck(1) as CheckRunRecord, "build", { login: "maintainer" });
    expect(checks("Blueprint build").at(-1)).toMatchObject({ conclusion: "failure", title: "The build failed" });
    await comment("maintainer", "/revise add a test too");
    expect(planCheck(1)).toMatchObject({ conclusion: "cancelled", title: "Superseded by plan v2", actions: [] });
  });

  it("cancels the plan check when a revision follows a build whose verification failed", async () => {
    await start([
      submit({ verification: ["sh scripts/check.sh"] }),
      ...BUILD_STEPS,
      submit({ title: "Add retry, verified", verification: ["sh scripts/check.sh"] }),
    ]);
    await comment("maintainer", "/plan add retries");
    await click(planCheck(1) as CheckRunRecord, "build", { login: "maintainer" });
    expect(checks("Blueprint build").at(-1)).toMatchObject({
      conclusion: "failure",
      title: "Built, but verification failed: 1 of 1 checks",
    });
    // Built but not verified: the plan check was left waiting, with its buttons, until a revision came.
    expect(planCheck(1)).toMatchObject({ conclusion: "neutral" });
    await comment("maintainer", "/revise make the check pass");
    expect(planCheck(1)).toMatchObject({ conclusion: "cancelled", title: "Superseded by plan v2", actions: [] });
    expect(planCheck(2)).toMatchObject({ conclusion: "neutral", title: "Plan v2 waits for approval" });
  });

  it("keeps a built plan's check a success when a new plan follows", async () => {
    await start([submit(), ...BUILD_STEPS, submit({ title: "Add retry, once more" })]);
    await comment("maintainer", "/plan add retries");
    await click(planCheck(1) as CheckRunRecord, "build", { login: "maintainer" });
    expect(planCheck(1)).toMatchObject({ conclusion: "success", title: "Plan v1 is built" });
    await comment("maintainer", "/plan once more");
    expect(planCheck(2)).toMatchObject({ conclusion: "neutral", title: "Plan v2 waits for approval" });
    expect(planCheck(1)).toMatchObject({ conclusion: "success", title: "Plan v1 is built" });
  });

  it("cancels the plan check when a push makes the plan stale: its Build button goes", async () => {
    await start([submit()]);
    await comment("maintainer", "/plan add retries");
    writeFileSync(path.join(work, "README.md"), "# Hello again\n");
    gitIn(work, ["commit", "-qam", "Another change"]);
    gitIn(work, ["push", "-q", "origin", "HEAD:refs/heads/feature"]);
    const moved = github.repository.head("feature") ?? "";
    const sync = webhookExample("pull_request", (e) => e.action === "synchronize" || e.action === "opened");
    sync.action = "synchronize";
    sync.number = 1;
    sync.pull_request.number = 1;
    sync.pull_request.head.sha = moved;
    sync.repository.clone_url = github.cloneUrl;
    sync.installation = { id: INSTALLATION_ID, node_id: "x" };
    await app.deliver("pull_request", sync);
    expect(planCheck(1)).toMatchObject({
      conclusion: "cancelled",
      title: "Stale: new commits were pushed",
      actions: [],
    });
  });

  it("refuses a click by someone who may not command Blueprint, on the thread, and builds nothing", async () => {
    await start([submit(), ...BUILD_STEPS]);
    await comment("maintainer", "/plan add retries");
    const head = github.repository.head("feature");
    await click(planCheck(1) as CheckRunRecord, "build", { login: "reader" });

    expect(github.state.botComments(1).at(-1)?.body).toContain("@reader");
    expect(model.requests).toHaveLength(1);
    expect(github.repository.head("feature")).toBe(head);
    expect(checks("Blueprint build")).toEqual([]);
  });

  it("holds a click to the approvers rule: with `approvers: codeowners`, a non-owner's click is refused and an owner's builds", async () => {
    await start([submit(), ...BUILD_STEPS], {
      ".github/blueprint.yml": "approvers: codeowners\n",
      ".github/CODEOWNERS": "/src/ @alice\n",
    });
    await comment("maintainer", "/plan add retries");
    const plan = planCheck(1) as CheckRunRecord;
    expect(plan.summary).toContain(
      "**Who may approve:** code owners (per the default branch's CODEOWNERS) of the files each step changes",
    );
    const head = github.repository.head("feature");

    await click(plan, "build", { login: "maintainer" });
    expect(github.state.botComments(1).at(-1)?.body).toContain("@maintainer's approval does not count here");
    expect(github.repository.head("feature")).toBe(head);

    await click(plan, "build", { login: "alice" });
    expect(github.repository.log("feature").slice(0, 2)).toEqual([
      "S2: Use the helper in the client",
      "S1: Add a retry helper",
    ]);
  });

  it("binds a click to the commit its check is on: a check on another commit, or a head that moved since, builds nothing", async () => {
    await start([submit(), ...BUILD_STEPS]);
    await comment("maintainer", "/plan add retries");
    const plan = planCheck(1) as CheckRunRecord;
    const main = github.repository.head("main") ?? "";

    await click({ ...plan, headSha: main }, "build", { login: "maintainer" });
    expect(github.state.botComments(1).at(-1)?.body).toContain(
      `The check @maintainer clicked is on commit \`${main.slice(0, 7)}\`, but plan v1 was made on \`${plan.headSha.slice(0, 7)}\``,
    );

    writeFileSync(path.join(work, "README.md"), "# Hello again\n");
    gitIn(work, ["commit", "-qam", "Another change"]);
    gitIn(work, ["push", "-q", "origin", "HEAD:refs/heads/feature"]);
    const moved = github.repository.head("feature");
    await click(plan, "build", { login: "maintainer" });
    expect(github.state.botComments(1).at(-1)?.body).toContain("The pull request's head moved");
    expect(model.requests).toHaveLength(1);
    expect(github.repository.head("feature")).toBe(moved);
  });

  it("refuses a click on a plan edited by hand before it: the check's summary shows the plan as Blueprint posted it", async () => {
    await start([submit(), ...BUILD_STEPS]);
    await comment("maintainer", "/plan add retries");
    const planComment = github.state.botComments(1).find((c) => c.body.includes("Use the helper in the client"));
    if (!planComment) throw new Error("no plan comment");
    // A maintainer rewords S2 a minute before the click; the check run still lists S2 as first planned.
    planComment.body = planComment.body.replace(
      "Use the helper in the client",
      "Use the helper in the client and the server",
    );
    planComment.updatedAt = new Date(Date.now() - 60_000).toISOString();
    const head = github.repository.head("feature");
    await click(planCheck(1) as CheckRunRecord, "build", { login: "maintainer" });

    expect(github.state.botComments(1).at(-1)?.body).toContain(
      "The plan was edited by hand, and the plan check's summary in the Checks tab still shows the plan as Blueprint posted it, so that click does not approve the edit.",
    );
    expect(model.requests).toHaveLength(1);
    expect(github.repository.head("feature")).toBe(head);
  });

  it("binds a click to the plan its check shows: once a /build applied a hand edit, the check's Build button builds nothing", async () => {
    await start([submit(), write("src/retry.js", "export const retry = (fn) => fn();\n"), complete("S1")]);
    await comment("maintainer", "/plan add retries");
    const check = planCheck(1) as CheckRunRecord;
    const planComment = github.state.botComments(1).find((c) => c.body.includes("Use the helper in the client"));
    if (!planComment) throw new Error("no plan comment");
    expect(check.externalId).toBe(`blueprint-plan:#1:v1:${/plan `([0-9a-f]{16})`/.exec(planComment.body)?.[1]}`);
    // A maintainer rewords S2, then builds S1 alone: the build takes the edit into the plan's state.
    planComment.body = planComment.body.replace("Use the helper in the client", "Delete the client");
    planComment.updatedAt = new Date(Date.now() - 60_000).toISOString();
    await comment("maintainer", "/build S1");
    expect(github.repository.log("feature")[0]).toBe("S1: Add a retry helper");
    const head = github.repository.head("feature");

    // The check still shows S2 as first planned; its button must not build the plan as edited.
    expect(check.summary).toContain("**S2** Use the helper in the client");
    await click(check, "build", { login: "maintainer" });
    expect(github.state.botComments(1).at(-1)?.body).toMatch(
      /^The plan check @maintainer clicked shows plan v1 as Blueprint first posted it \(`[0-9a-f]{16}`\), but the plan has been edited since/,
    );
    expect(model.requests).toHaveLength(3);
    expect(github.repository.head("feature")).toBe(head);
  });

  it("cancels the superseded revision's check and refuses a click on it with a plain reason", async () => {
    await start([submit(), submit({ title: "Add retry, with a test" }), ...BUILD_STEPS]);
    await comment("maintainer", "/plan add retries");
    const first = planCheck(1) as CheckRunRecord;
    await comment("maintainer", "/revise add a test too");

    expect(planCheck(1)).toMatchObject({ conclusion: "cancelled", title: "Superseded by plan v2", actions: [] });
    expect(planCheck(2)).toMatchObject({ conclusion: "neutral", title: "Plan v2 waits for approval" });
    const head = github.repository.head("feature");
    await click(first, "build", { login: "maintainer" });

    expect(github.state.botComments(1).at(-1)?.body).toContain(
      "@maintainer clicked **Build plan v1** on an outdated check: plan v1 was superseded by v2",
    );
    expect(model.requests).toHaveLength(2);
    expect(github.repository.head("feature")).toBe(head);
  });

  it("ignores bots' clicks and clicks on another app's check runs", async () => {
    await start([submit(), ...BUILD_STEPS]);
    await comment("maintainer", "/plan add retries");
    const plan = planCheck(1) as CheckRunRecord;
    const before = github.state.botComments(1).length;

    await click(plan, "build", { login: "helper[bot]", userType: "Bot" });
    await click(plan, "build", { login: "maintainer", app: { id: 999, slug: "other-app" } });

    expect(github.state.botComments(1)).toHaveLength(before);
    expect(model.requests).toHaveLength(1);
    expect(checks("Blueprint build")).toEqual([]);
    // The control: the same click as Blueprint's own check builds.
    await click(plan, "build", { login: "maintainer" });
    expect(model.requests.length).toBeGreaterThan(1);
  });

  it("answers Revise by asking the clicker what should change", async () => {
    await start([submit()]);
    await comment("maintainer", "/plan add retries");
    await click(planCheck(1) as CheckRunRecord, "revise", { login: "maintainer" });

    expect(botText()).toContain("@maintainer, what should change in plan v1? Comment `/revise`");
    expect(model.requests).toHaveLength(1);
  });
});
