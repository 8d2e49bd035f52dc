import { describe, expect, it, onTestFinished } from "vitest";
import { gitIn } from "../helpers/git-repo.js";
import { INSTALLATION_TOKEN, type GitHubDoubleOptions } from "../helpers/github-double.js";
import { samplePlan, type Script, type ModelRequest } from "../helpers/model-server.js";
import { commentPayload, reviewPayload } from "../helpers/app.js";
import { stateOf, useAppFixture } from "../helpers/app-fixture.js";
import type { ThreadState } from "../../src/workflow/state.js";

const FILES = {
  "README.md": "# Hello\n",
  "src/client.js": "export async function get(url) {\n  return fetch(url);\n}\n",
};
const MODEL_KEY = "sk-test-model-key-000000000000000000";

const threeSteps = samplePlan({
  verification: ["test -f src/retry.js", "Check the client by hand."],
  steps: [
    { id: "S1", title: "Add a retry helper", details: "Create src/retry.js", files: ["src/retry.js"], deps: [] },
    { id: "S2", title: "Use the helper", details: "Edit src/client.js", files: ["src/client.js"], deps: ["S1"] },
    { id: "S3", title: "Document retries", details: "README", files: ["README.md"], deps: [] },
  ],
});

const write = (path: string, content: string) => ({
  toolCalls: [{ name: "write_file", arguments: { path, content } }],
});
const complete = (id: string, summary = `did ${id}`) => ({
  toolCalls: [{ name: "complete_step", arguments: { step_id: id, summary } }],
});
const stepOf = (request: ModelRequest) => /^Step (S\d+):/.exec(String(request.messages[1]?.content))?.[1];

describe("build mode", () => {
  const fx = useAppFixture({
    files: FILES,
    permissions: { maintainer: "write", reader: "read" },
    env: { OPENAI_API_KEY: MODEL_KEY, WEBHOOK_SECRET: "webhook-secret-value-123" },
  });
  const start = (script: Script, github: GitHubDoubleOptions = {}) => fx.start(script, {}, { github });
  const seedPlan = (state: Partial<ThreadState> = {}, plan: unknown = threeSteps) => fx.seedPlan(plan, state);

  it("builds an issue's plan: one commit per step, boxes ticked, a pull request opened", async () => {
    // The secrets are in the app's own environment, as in production.
    const saved = { ...process.env };
    Object.assign(process.env, {
      OPENAI_API_KEY: MODEL_KEY,
      WEBHOOK_SECRET: "webhook-secret-value-123",
      PRIVATE_KEY: "-----BEGIN RSA PRIVATE KEY-----\nfake\n-----END RSA PRIVATE KEY-----",
      GITHUB_TOKEN: INSTALLATION_TOKEN,
    });
    onTestFinished(() => {
      process.env = saved;
    });
    await start([
      write("src/retry.js", "export const retry = (fn) => fn();\n"),
      complete("S1", "Added the retry helper."),
      {
        toolCalls: [
          {
            name: "edit_file",
            arguments: {
              path: "src/client.js",
              old_string: "return fetch(url);",
              new_string: "return retry(() => fetch(url));",
            },
          },
        ],
      },
      { toolCalls: [{ name: "run_command", arguments: { command: "env", timeout_s: null } }] },
      complete("S2"),
      write("README.md", "# Hello\n\nRequests are retried.\n"),
      complete("S3"),
    ]);
    const plan = seedPlan();
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));

    expect(fx.repo.log("blueprint/issue-1")).toEqual([
      "S3: Document retries",
      "S2: Use the helper",
      "S1: Add a retry helper",
      "initial commit",
    ]);
    expect(fx.repo.show("blueprint/issue-1", "src/retry.js")).toBe("export const retry = (fn) => fn();\n");
    expect(fx.repo.show("blueprint/issue-1", "src/client.js")).toContain("return retry(() => fetch(url));");
    expect(gitIn(fx.repo.bare, ["log", "-1", "--format=%an <%ae>%n%b", "refs/heads/blueprint/issue-1~2"])).toContain(
      "Added the retry helper.",
    );
    expect(gitIn(fx.repo.bare, ["log", "-1", "--format=%an", "refs/heads/blueprint/issue-1"]).trim()).toBe(
      "blueprint[bot]",
    );
    expect(fx.repo.head("main")).toBe(gitIn(fx.repo.bare, ["rev-parse", "refs/heads/blueprint/issue-1~3"]).trim());

    // Each step is its own conversation, named in its first user message; steps ran in order.
    expect(fx.model.requests.map(stepOf)).toEqual(["S1", "S1", "S2", "S2", "S2", "S3", "S3"]);

    // No command sees the tokens or keys.
    const envOutput = String(fx.model.requests[4]!.messages.at(-1)?.content);
    expect(envOutput).toContain("PATH=");
    for (const secret of [
      INSTALLATION_TOKEN,
      MODEL_KEY,
      "webhook-secret-value-123",
      "PRIVATE KEY",
      "GITHUB_TOKEN",
      "OPENAI_API_KEY",
    ]) {
      expect(envOutput).not.toContain(secret);
    }

    const body = fx.github.comments.find((c) => c.id === plan.id)!.body;
    const sha1 = gitIn(fx.repo.bare, ["rev-parse", "refs/heads/blueprint/issue-1~2"]).trim();
    expect(body).toContain(`- [x] **S1** Add a retry helper`);
    expect(body).toContain(`[${sha1.slice(0, 7)}](https://github.com/Codertocat/Hello-World/commit/${sha1})`);
    expect(body).toMatch(/- \[x\] \*\*S2\*\*/);
    expect(body).toMatch(/- \[x\] \*\*S3\*\*/);
    expect(body).toContain("Audit log (4 actions)");
    expect(body).toContain("command `env` → exit 0");
    expect(body).toContain("✅ <code>test -f src/retry.js</code>");
    const history = fx.github.commentHistory.get(plan.id)!;
    expect(history.some((b) => b.includes("Building S1 (1 of 3)"))).toBe(true);
    expect(history.some((b) => b.includes("Building S2 (2 of 3)"))).toBe(true);

    const state = stateOf(body);
    expect(state.status).toBe("built");
    expect(state.steps.S1).toMatchObject({ status: "done", commit: sha1 });
    expect(state.branch).toBe("blueprint/issue-1");

    expect(fx.github.pulls).toHaveLength(1);
    const pull = fx.github.pulls[0]!;
    expect(pull).toMatchObject({ head: "blueprint/issue-1", base: "main", title: "Add retry to the HTTP client" });
    expect(pull.body).toContain("Closes #1");
    expect(pull.body).toContain(sha1.slice(0, 7));
    expect(pull.body).toMatch(/prompt tokens/);
    expect(state.pullRequest).toBe(pull.number);
    // The token never lands in the workspace's git config.
    expect(JSON.stringify(fx.github.requests)).not.toContain(INSTALLATION_TOKEN);
  });

  it("builds only the named step and what it depends on", async () => {
    await start([write("src/retry.js", "x\n"), complete("S1"), write("src/client.js", "y\n"), complete("S2")]);
    seedPlan();
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build S2", cloneUrl: fx.repo.url }));
    expect(fx.repo.log("blueprint/issue-1")).toEqual([
      "S2: Use the helper",
      "S1: Add a retry helper",
      "initial commit",
    ]);
    expect(fx.model.requests.map(stepOf)).not.toContain("S3");
    const state = stateOf(fx.github.botComments()[0]!.body);
    expect(state.steps.S3).toEqual({ status: "pending" });
    expect(state.status).toBe("pending");
  });

  it("keeps S1 pushed when S2 fails, and resumes at S2 on the next /build", async () => {
    await start([
      write("src/retry.js", "x\n"),
      complete("S1"),
      { status: 500 },
      // second /build
      write("src/client.js", "y\n"),
      complete("S2"),
      write("README.md", "z\n"),
      complete("S3"),
    ]);
    const plan = seedPlan();
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    expect(fx.repo.log("blueprint/issue-1")).toEqual(["S1: Add a retry helper", "initial commit"]);
    let body = fx.github.comments.find((c) => c.id === plan.id)!.body;
    expect(body).toContain("- [x] **S1**");
    expect(body).toMatch(/- \[ \] \*\*S2\*\* ❌ Use the helper.*failed: the model endpoint/);
    expect(stateOf(body).status).toBe("failed");
    expect(fx.github.pulls).toHaveLength(0);

    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    expect(fx.repo.log("blueprint/issue-1")).toEqual([
      "S3: Document retries",
      "S2: Use the helper",
      "S1: Add a retry helper",
      "initial commit",
    ]);
    expect(fx.model.requests.slice(3).map(stepOf)).toEqual(["S2", "S2", "S3", "S3"]);
    body = fx.github.comments.find((c) => c.id === plan.id)!.body;
    expect(stateOf(body).status).toBe("built");
  });

  it("resumes after a crash between push and marker update without redoing pushed steps", async () => {
    await start([write("README.md", "z\n"), complete("S3")]);
    // S1 and S2 were pushed by an earlier run that died before recording them.
    const base = fx.repo.head();
    const plan = seedPlan({
      status: "building",
      base: { branch: "main", sha: base },
      branch: "blueprint/issue-1",
      steps: { S1: { status: "building" }, S2: { status: "pending" }, S3: { status: "pending" } },
    });
    // Blueprint's step commits name the plan revision they built.
    fx.repo.commit(
      { "src/retry.js": "x\n" },
      `S1: Add a retry helper\n\ndid S1\n\nBlueprint-Plan: ${plan.id}/v1`,
      "blueprint/issue-1",
    );
    fx.repo.commit(
      { "src/client.js": "y\n" },
      `S2: Use the helper\n\ndid S2\n\nBlueprint-Plan: ${plan.id}/v1`,
      "blueprint/issue-1",
    );
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    expect(fx.model.requests.map(stepOf)).toEqual(["S3", "S3"]);
    expect(fx.repo.log("blueprint/issue-1")).toEqual([
      "S3: Document retries",
      "S2: Use the helper",
      "S1: Add a retry helper",
      "initial commit",
    ]);
  });

  it("builds on a same-repository pull request's head after an approving review", async () => {
    const headSha = fx.repo.commit({ "src/feature.js": "f\n" }, "feature work", "feature");
    gitIn(fx.repo.bare, ["update-ref", "refs/pull/1/head", headSha]);
    await start([write("src/retry.js", "x\n"), complete("S1")], {
      pullRequest: { headRef: "feature", headSha, baseRef: "main" },
    });
    seedPlan(
      { head: { ref: "feature", sha: headSha, sameRepo: true } },
      samplePlan({ verification: [], steps: [{ id: "S1", title: "Only step", details: "", files: [], deps: [] }] }),
    );
    await fx.app.deliver(
      "pull_request_review",
      reviewPayload({ state: "approved", commitId: headSha, login: "maintainer", cloneUrl: fx.repo.url }),
    );
    expect(fx.repo.log("feature")).toEqual(["S1: Only step", "feature work", "initial commit"]);
    expect(fx.github.pulls).toHaveLength(0);
    expect(fx.github.botComments().at(-1)!.body).toContain("### Build report");
  });

  it("a question asked while building waits for the answer, then resumes at that step", async () => {
    await start([
      write("src/retry.js", "x\n"),
      complete("S1"),
      { toolCalls: [{ name: "ask_user", arguments: { question: "Should the client retry on 404?" } }] },
      // after the answer
      write("src/client.js", "no 404 retries\n"),
      complete("S2"),
      write("README.md", "z\n"),
      complete("S3"),
    ]);
    const plan = seedPlan();
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    expect(fx.repo.log("blueprint/issue-1")).toEqual(["S1: Add a retry helper", "initial commit"]);
    expect(fx.github.botComments().at(-1)!.body).toContain("Should the client retry on 404?");
    const waiting = stateOf(fx.github.comments.find((c) => c.id === plan.id)!.body);
    expect(waiting).toMatchObject({ status: "awaiting_answer", questionMode: "build", questionStep: "S2" });

    await fx.app.deliver("issue_comment", commentPayload({ body: "No, never on 404.", cloneUrl: fx.repo.url }));
    const resumed = fx.model.requests[3]!;
    expect(stepOf(resumed)).toBe("S2");
    expect(String(resumed.messages[1]!.content)).toContain(
      "Q: Should the client retry on 404?\nA (@maintainer): No, never on 404.",
    );
    expect(fx.repo.log("blueprint/issue-1")).toEqual([
      "S3: Document retries",
      "S2: Use the helper",
      "S1: Add a retry helper",
      "initial commit",
    ]);
    expect(stateOf(fx.github.comments.find((c) => c.id === plan.id)!.body).status).toBe("built");
  });

  it("an answer that would resume a build needs the repository's min_permission, as /build does", async () => {
    fx.repo.commit({ ".github/blueprint.yml": "min_permission: maintain\n" }, "configure");
    await start(
      [
        write("src/retry.js", "x\n"),
        complete("S1"),
        { toolCalls: [{ name: "ask_user", arguments: { question: "Retry on 404?" } }] },
        write("src/client.js", "y\n"),
        complete("S2"),
      ],
      { permissions: { maintainer: "write", boss: "maintain" } },
    );
    const plan = seedPlan();
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", login: "boss", cloneUrl: fx.repo.url }));
    expect(stateOf(fx.github.comments.find((c) => c.id === plan.id)!.body)).toMatchObject({
      status: "awaiting_answer",
      questionMode: "build",
    });
    const asked = fx.model.requests.length;

    // A writer's answer is refused and resumes nothing; the question still waits.
    await fx.app.deliver(
      "issue_comment",
      commentPayload({ body: "Yes, retry.", login: "maintainer", cloneUrl: fx.repo.url }),
    );
    expect(fx.model.requests).toHaveLength(asked);
    expect(fx.github.botComments().at(-1)!.body).toMatch(
      /^Sorry @maintainer, this repository's `.github\/blueprint.yml` allows only people with maintain access[\s\S]*not taken as the answer/,
    );
    expect(fx.repo.log("blueprint/issue-1")).toEqual(["S1: Add a retry helper", "configure", "initial commit"]);
    expect(stateOf(fx.github.comments.find((c) => c.id === plan.id)!.body).status).toBe("awaiting_answer");

    // The maintainer's answer resumes the build.
    await fx.app.deliver(
      "issue_comment",
      commentPayload({ body: "No, never on 404.", login: "boss", cloneUrl: fx.repo.url }),
    );
    expect(fx.model.requests.length).toBeGreaterThan(asked);
    expect(fx.repo.log("blueprint/issue-1")[0]).toBe("S2: Use the helper");
  });

  describe("approvals that start nothing", () => {
    it("a read-only user's /build is refused", async () => {
      await start([]);
      seedPlan();
      await fx.app.deliver("issue_comment", commentPayload({ body: "/build", login: "reader", cloneUrl: fx.repo.url }));
      expect(fx.model.requests).toHaveLength(0);
      expect(fx.github.botComments().at(-1)!.body).toMatch(/only people with write access/);
      expect(() => fx.repo.head("blueprint/issue-1")).toThrow();
    });

    it("the requester's own /build is refused when the repository requires another approver", async () => {
      fx.repo.commit({ ".github/blueprint.yml": "require_other_approver: true\n" }, "configure");
      await start([]);
      seedPlan();
      await fx.app.deliver(
        "issue_comment",
        commentPayload({ body: "/build", login: "maintainer", cloneUrl: fx.repo.url }),
      );
      expect(fx.model.requests).toHaveLength(0);
      expect(fx.github.botComments().at(-1)!.body).toMatch(
        /requires someone other than the plan's requester \(@maintainer\)/,
      );
    });

    it("a repository's min_permission raises the bar: a writer's /build and /plan are refused where maintain is required", async () => {
      fx.repo.commit({ ".github/blueprint.yml": "min_permission: maintain\n" }, "configure");
      await start([]);
      seedPlan();
      await fx.app.deliver(
        "issue_comment",
        commentPayload({ body: "/build", login: "maintainer", cloneUrl: fx.repo.url }),
      );
      expect(fx.model.requests).toHaveLength(0);
      expect(fx.github.botComments().at(-1)!.body).toMatch(
        /^Sorry @maintainer, this repository's `.github\/blueprint.yml` allows only people with maintain access/,
      );
      expect(fx.repo.log("main")).toEqual(["configure", "initial commit"]);
      await fx.app.deliver(
        "issue_comment",
        commentPayload({ body: "/plan", login: "maintainer", cloneUrl: fx.repo.url }),
      );
      expect(fx.model.requests).toHaveLength(0);
      expect(fx.github.botComments().at(-1)!.body).toMatch(
        /^## ❌ Planning failed[\s\S]*allows only people with maintain access/,
      );
    });

    it("a read-only reviewer's approval is refused with a reply", async () => {
      const headSha = fx.repo.commit({ "a.txt": "a\n" }, "a", "feature");
      gitIn(fx.repo.bare, ["update-ref", "refs/pull/1/head", headSha]);
      await start([], { pullRequest: { headRef: "feature", headSha, baseRef: "main" } });
      seedPlan({ head: { ref: "feature", sha: headSha, sameRepo: true } });
      await fx.app.deliver(
        "pull_request_review",
        reviewPayload({ state: "approved", commitId: headSha, login: "reader", cloneUrl: fx.repo.url }),
      );
      expect(fx.model.requests).toHaveLength(0);
      expect(fx.github.botComments().at(-1)!.body).toMatch(/approval does not count/);
    });

    it("an approving review with no plan is ignored", async () => {
      const headSha = fx.repo.commit({ "a.txt": "a\n" }, "a", "feature");
      await start([], { pullRequest: { headRef: "feature", headSha, baseRef: "main" } });
      await fx.app.deliver(
        "pull_request_review",
        reviewPayload({ state: "approved", commitId: headSha, login: "maintainer", cloneUrl: fx.repo.url }),
      );
      expect(fx.github.botComments().map((c) => c.body)).toEqual([]);
    });

    it("/build v1 after v2 exists is refused", async () => {
      await start([]);
      seedPlan({ status: "superseded" });
      seedPlan({ revision: 2 });
      await fx.app.deliver("issue_comment", commentPayload({ body: "/build v1", cloneUrl: fx.repo.url }));
      expect(fx.model.requests).toHaveLength(0);
      expect(fx.github.botComments().at(-1)!.body).toMatch(/Plan v1 was superseded by v2/);
    });

    it("an approval of a stale head is refused", async () => {
      const planned = fx.repo.commit({ "a.txt": "a\n" }, "a", "feature");
      const moved = fx.repo.commit({ "a.txt": "b\n" }, "b", "feature");
      gitIn(fx.repo.bare, ["update-ref", "refs/pull/1/head", moved]);
      await start([], { pullRequest: { headRef: "feature", headSha: moved, baseRef: "main" } });
      seedPlan({ head: { ref: "feature", sha: planned, sameRepo: true } });
      await fx.app.deliver(
        "pull_request_review",
        reviewPayload({ state: "approved", commitId: moved, login: "maintainer", cloneUrl: fx.repo.url }),
      );
      expect(fx.model.requests).toHaveLength(0);
      expect(fx.github.botComments().at(-1)!.body).toMatch(/the plan was made on/);
      expect(fx.repo.log("feature")).toEqual(["b", "a", "initial commit"]);
    });

    it("a fork's pull request gets an explanation and no push", async () => {
      const headSha = fx.repo.commit({ "a.txt": "a\n" }, "a", "feature");
      gitIn(fx.repo.bare, ["update-ref", "refs/pull/1/head", headSha]);
      await start([], { pullRequest: { headRef: "feature", headSha, baseRef: "main", sameRepo: false } });
      seedPlan({ head: { ref: "feature", sha: headSha, sameRepo: false } });
      await fx.app.deliver(
        "issue_comment",
        commentPayload({ body: "/build", cloneUrl: fx.repo.url, isPullRequest: true }),
      );
      expect(fx.model.requests).toHaveLength(0);
      expect(fx.github.botComments().at(-1)!.body).toMatch(/comes from a fork/);
    });
  });
});
