import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "vitest";
import { startModelServer, type ModelServer } from "../helpers/model-server.js";
import { PATIENCE_MS } from "../helpers/patience.js";
import { startGitHubDouble, type GitHubDouble } from "./double/github-server.js";
import type { CommentRecord } from "./double/state.js";
import { deliverWebhook, issueCommentCreated, pullRequestClosed } from "./double/webhooks.js";
import { requireBuiltApp, startAppProcess, type AppProcess } from "./support/app-process.js";
import { FILES, GREET_JS, greeterScript, INDEX_JS, PLAN, STEP_COMMITS, stepOf } from "./support/greeter-scenario.js";

/**
 * The App as users run it — `probot run ./lib/index.js`, a real HTTP server — against a local
 * GitHub (REST under /api/v3, git over smart HTTP) and a scripted OpenAI-compatible model:
 * /plan → plan comment → /build → commits pushed → pull request → boxes ticked.
 */

const WEBHOOK_SECRET = "e2e-webhook-secret-5b1f0c9d";
const MODEL_KEY = "sk-e2e-model-key-00000000000000000000";
const BRANCH = "blueprint/issue-1";

describe("the GitHub App, run as `probot run ./lib/index.js` against a local GitHub", () => {
  let github: GitHubDouble;
  let model: ModelServer;
  let app: AppProcess;
  let workdir: string;
  let home: string;
  let baseSha: string;
  let planComment: CommentRecord;

  beforeAll(async () => {
    requireBuiltApp();
    github = await startGitHubDouble({
      files: FILES,
      issues: [
        {
          title: "Greet people by name",
          body: "The CLI always says hello to the world. It should greet whoever is named.",
          author: "octocat",
        },
      ],
      permissions: { maintainer: "write" },
    });
    baseSha = github.repository.head("main") ?? "";
    model = await startModelServer(greeterScript());
    workdir = mkdtempSync(path.join(os.tmpdir(), "blueprint-e2e-workdir-"));
    home = mkdtempSync(path.join(os.tmpdir(), "blueprint-e2e-home-"));
    app = await startAppProcess({
      HOME: home,
      APP_ID: String(github.appId),
      PRIVATE_KEY: github.privateKey ?? "",
      WEBHOOK_SECRET,
      GHE_HOST: github.host,
      GHE_PROTOCOL: "http",
      LOG_LEVEL: "debug",
      OPENAI_BASE_URL: model.url,
      OPENAI_API_KEY: MODEL_KEY,
      BLUEPRINT_MODEL: "e2e-model",
      BLUEPRINT_MODEL_RETRIES: "0",
      BLUEPRINT_WORKDIR: workdir,
      BLUEPRINT_PROGRESS_INTERVAL_MS: "0",
      BLUEPRINT_GITHUB_WRITE_GAP_MS: "0",
    });
  });

  afterAll(async () => {
    await app?.stop();
    await model?.close();
    await github?.stop();
    for (const dir of [workdir, home]) if (dir) rmSync(dir, { recursive: true, force: true });
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
      "--- app output (tail) ---",
      app.output().slice(-6000),
    ].join("\n");

  /** A comment typed on GitHub by `login`, then its signed webhook delivered to the app. */
  async function comment(login: string, body: string): Promise<CommentRecord> {
    const typed = github.state.addUserComment(1, login, body);
    const delivery = await deliverWebhook(app.webhookUrl, WEBHOOK_SECRET, issueCommentCreated(github, typed));
    expect(delivery.status, `webhook answered ${delivery.status}: ${delivery.body}`).toBe(200);
    return typed;
  }

  async function waitFor(what: string, done: () => boolean): Promise<void> {
    const deadline = Date.now() + PATIENCE_MS;
    while (!done()) {
      if (Date.now() > deadline)
        throw new Error(
          `timed out waiting for ${what} (the requests the double saw and the app's output are printed above)`,
        );
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /**
   * Until the app has sent the double nothing for a while: its job is over. Longer than the
   * ~1 s Probot's Octokit (plugin-throttling) leaves between two writes, so a paced write is not missed.
   */
  async function waitForQuiet(quietMs = 1_500): Promise<void> {
    let seen = -1;
    let since = Date.now();
    await waitFor("the app to go quiet", () => {
      if (github.requests.length !== seen) {
        seen = github.requests.length;
        since = Date.now();
      }
      return Date.now() - since >= quietMs;
    });
  }

  const failedVisibly = () => github.state.botComments(1).some((c) => c.body.includes("❌"));

  it("/plan: acknowledges with 👀 and posts Plan v1 with a task list and the hidden state", async () => {
    onTestFailed(() => console.error(diagnostics()));
    const command = await comment("maintainer", "/plan greet by name\nKeep it small.");

    await waitFor(
      "the plan comment",
      () => github.state.botComments(1).some((c) => c.body.includes("Plan v1")) || failedVisibly(),
    );
    await waitForQuiet();

    expect(github.state.reactions).toContainEqual(
      expect.objectContaining({
        commentId: command.id,
        content: "eyes",
        user: expect.objectContaining({ login: github.botLogin }),
      }),
    );
    const bot = github.state.botComments(1);
    expect(bot).toHaveLength(1);
    planComment = bot[0]!;
    expect(planComment.body).toContain("Plan v1");
    expect(planComment.body).toContain("- [ ] **S1** Add a greet helper");
    expect(planComment.body).toContain("- [ ] **S2** Greet by name in the entry point");
    expect(planComment.body).toContain("<!-- blueprint:state");
    // Planning only read: nothing was pushed.
    expect(github.repository.head(BRANCH)).toBeNull();
    expect(github.requests.filter((r) => r.gitService === "git-receive-pack")).toEqual([]);
    // The model was offered no write tools while planning.
    const offered = model.requests[0]?.tools?.map((tool) => tool.function.name) ?? [];
    expect(offered).toContain("submit_plan");
    expect(offered).not.toContain("write_file");
  });

  it("/build: one commit per step in the served repository, a pull request, the boxes ticked", async () => {
    onTestFailed(() => console.error(diagnostics()));
    expect(planComment, "the /plan walk must have produced a plan comment").toBeDefined();
    const command = await comment("maintainer", "/build");

    await waitFor("the pull request", () => github.state.pulls.length > 0 || failedVisibly());
    await waitForQuiet();

    expect(github.state.reactions).toContainEqual(expect.objectContaining({ commentId: command.id, content: "eyes" }));
    expect(github.repository.log(BRANCH)).toEqual([...STEP_COMMITS, "initial commit"]);
    expect(github.repository.show(BRANCH, "src/greet.js")).toBe(GREET_JS);
    expect(github.repository.show(BRANCH, "src/index.js")).toBe(INDEX_JS);
    expect(github.repository.git(["log", "-1", "--format=%an", `refs/heads/${BRANCH}`]).trim()).toBe("blueprint[bot]");
    // The default branch is untouched.
    expect(github.repository.head("main")).toBe(baseSha);
    expect(github.repository.log("main")).toEqual(["initial commit"]);

    expect(github.state.pulls).toHaveLength(1);
    const pull = github.state.pulls[0]!;
    expect(pull).toMatchObject({ head: BRANCH, base: "main", title: PLAN.title, state: "open" });
    expect(pull.body).toContain("Closes #1");
    expect(pull.body).toContain("test -f src/greet.js");

    const plan = github.state.comment(planComment.id)!;
    expect(plan.body).toContain("- [x] **S1** Add a greet helper");
    expect(plan.body).toContain("- [x] **S2** Greet by name in the entry point");
    expect(plan.body).toContain("<!-- blueprint:state");
    expect(plan.body).not.toContain("❌");
    // Ticked as each step was pushed, not only at the end.
    expect(plan.history.some((body) => body.includes("- [x] **S1**") && body.includes("- [ ] **S2**"))).toBe(true);
    // The "Blueprint build" check run, written with the job's own token, completed on the pull request's head.
    const headSha = github.repository.head(BRANCH);
    expect(
      github.state.checkRuns.find((run) => run.name === "Blueprint build" && run.headSha === headSha),
    ).toMatchObject({ status: "completed", conclusion: "success" });
    // Each step was its own conversation, in dependency order.
    expect(model.requests.map(stepOf).filter(Boolean)).toEqual(["S1", "S1", "S2", "S2"]);
  });

  it("speaks to GitHub only through documented operations, with the installation token, and leaves no token behind", async () => {
    onTestFailed(() => console.error(diagnostics()));
    await waitForQuiet();
    const tokens = github.issuedTokens();
    expect(tokens.length).toBeGreaterThan(0);

    // Every REST call is a documented GitHub operation with a body that fits its schema.
    expect(github.violations).toEqual([]);
    expect(github.unimplemented.map((r) => `${r.method} ${r.path}`)).toEqual([]);
    const rest = github.requests.filter((r) => r.kind === "rest");
    expect(rest.filter((r) => r.status >= 400).map((r) => `${r.status} ${r.method} ${r.path}`)).toEqual([]);
    // The App's JWT only mints tokens; everything else carries an installation token.
    const expectedAuth = (r: (typeof rest)[number]) =>
      r.operationId === "apps/create-installation-access-token" ? "app-jwt" : "installation-token";
    expect(rest.filter((r) => r.auth !== expectedAuth(r)).map((r) => `${r.method} ${r.path} (${r.auth})`)).toEqual([]);
    expect(rest.some((r) => r.auth === "app-jwt")).toBe(true);

    // git: clones and fetches, then pushes, all with the installation token.
    const git = github.requests.filter((r) => r.kind === "git");
    expect(git.some((r) => r.gitService === "git-upload-pack")).toBe(true);
    expect(git.some((r) => r.gitService === "git-receive-pack")).toBe(true);
    expect(
      git
        .filter((r) => r.auth !== "installation-token" || r.status !== 200)
        .map((r) => `${r.status} ${r.method} ${r.path} (${r.auth})`),
    ).toEqual([]);

    // The token is on no file under BLUEPRINT_WORKDIR (the mirror's config included), and in no log line.
    const files = filesUnder(workdir);
    expect(files.some((file) => path.basename(file) === "config")).toBe(true);
    const secrets = tokens.flatMap((token) => [token, Buffer.from(`x-access-token:${token}`).toString("base64")]);
    const leaks = files.filter((file) => secrets.some((secret) => readFileSync(file).includes(secret)));
    expect(leaks).toEqual([]);
    expect(secrets.filter((secret) => app.output().includes(secret))).toEqual([]);

    // Nothing secret reached GitHub's pages.
    const published = [
      ...github.state.comments.flatMap((c) => c.history),
      ...github.state.pulls.map((p) => p.body),
    ].join("\n");
    for (const secret of [...secrets, MODEL_KEY, WEBHOOK_SECRET]) expect(published).not.toContain(secret);
  });

  it("labels the issue by state, and merging the pull request deletes Blueprint's branch and says so in the plan comment", async () => {
    onTestFailed(() => console.error(diagnostics()));
    expect(planComment, "the /plan walk must have produced a plan comment").toBeDefined();
    const issue = github.state.issues.get(1);
    expect(issue?.labels).toEqual(["blueprint: built"]);
    expect(github.state.labels.map((label) => label.name)).toEqual([
      "blueprint: planned",
      "blueprint: approved",
      "blueprint: building",
      "blueprint: built",
    ]);
    expect(github.state.label("blueprint: built")).toMatchObject({
      color: "0e8a16",
      description: expect.stringContaining("built"),
    });

    const pull = github.state.pulls[0]!;
    expect(github.repository.head(BRANCH)).not.toBeNull();
    const delivery = await deliverWebhook(
      app.webhookUrl,
      WEBHOOK_SECRET,
      pullRequestClosed(github, pull, { merged: true, sender: "maintainer" }),
    );
    expect(delivery.status, `webhook answered ${delivery.status}: ${delivery.body}`).toBe(200);

    await waitFor("the branch to be deleted", () => github.repository.head(BRANCH) === null || failedVisibly());
    await waitFor(
      "the plan comment to say it was merged",
      () => github.state.comment(planComment.id)?.body.includes(`merged in #${pull.number}`) === true,
    );
    await waitForQuiet();
    expect(github.state.comment(planComment.id)?.body).toContain(`Its branch \`${BRANCH}\` is deleted.`);
    expect(github.repository.head("main")).toBe(baseSha);
    expect(issue?.labels).toEqual(["blueprint: built"]);
    expect(github.violations).toEqual([]);
    expect(github.unimplemented.map((r) => `${r.method} ${r.path}`)).toEqual([]);
    expect(
      github.requests
        .filter((r) => r.kind === "rest" && r.status >= 400)
        .map((r) => `${r.status} ${r.method} ${r.path}`),
    ).toEqual([]);
  });
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(full);
    return entry.isFile() && statSync(full).size < 20_000_000 ? [full] : [];
  });
}
