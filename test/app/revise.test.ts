import { describe, expect, it } from "vitest";
import { gitIn } from "../helpers/git-repo.js";
import type { GitHubDoubleOptions } from "../helpers/github-double.js";
import { samplePlan, type Script } from "../helpers/model-server.js";
import { commentPayload, startTestApp, webhookExample } from "../helpers/app.js";
import { stateOf, useAppFixture } from "../helpers/app-fixture.js";

const FILES = {
  "README.md": "# Hello\n",
  "src/client.js": "export const get = (url) => fetch(url);\n",
  "src/retry.js": "export const retry = (fn) => fn();\n",
};

const v2Plan = samplePlan({
  steps: [
    {
      id: "S1",
      title: "Use the existing retry helper in the client",
      details: "Import src/retry.js",
      files: ["src/client.js"],
      deps: [],
    },
    { id: "S2", title: "Add a test for retries", details: "New test", files: ["test/retry.test.js"], deps: ["S1"] },
  ],
});

describe("revisions and questions", () => {
  const fx = useAppFixture({ files: FILES, permissions: { maintainer: "write", reader: "read" } });
  const start = (script: Script, github: GitHubDoubleOptions = {}) => fx.start(script, {}, { github });

  const seedV1 = () => fx.seedPlan(samplePlan(), { explored: ["src/client.js"] });
  const submitV2 = { toolCalls: [{ name: "submit_plan", arguments: v2Plan }] };

  function expectV2(v1Id: number) {
    const v2 = fx.github.botComments().at(-1)!;
    expect(v2.id).not.toBe(v1Id);
    expect(v2.body).toMatch(/^## 📋 Plan v2: Add retry to the HTTP client\n\n### What changed since v1\n/);
    expect(v2.body).toContain("- ➖ Removed **S1** Add a retry helper");
    expect(v2.body).toContain("- ✏️ Changed **S2** → **S1**");
    expect(v2.body).toContain("- ➕ Added **S2** Add a test for retries");
    expect(stateOf(v2.body).revision).toBe(2);
    const v1 = fx.github.comments.find((c) => c.id === v1Id)!;
    expect(v1.body).toContain("Superseded by plan v2");
    expect(stateOf(v1.body).status).toBe("superseded");
    expect(fx.github.minimized).toEqual([v1.node_id]);
    return v2;
  }

  const lastTask = () => String(fx.model.requests.at(-1)!.messages[1]!.content);

  it("/revise makes v2 with the previous plan, the feedback marked newest, and a computed diff", async () => {
    await start([submitV2]);
    const v1 = seedV1();
    await fx.app.deliver(
      "issue_comment",
      commentPayload({ body: "/revise use the existing retry helper instead", cloneUrl: fx.repo.url }),
    );
    const task = lastTask();
    expect(task).toContain("# The current plan (v1)");
    expect(task).toContain('"title": "Add a retry helper"');
    expect(task).toMatch(
      /## NEWEST feedback \(on v1, by @maintainer, via revise\)\nuse the existing retry helper instead/,
    );
    expect(task).toContain("Files you already read in earlier runs (read again only what you need)\nsrc/client.js");
    expectV2(v1.id);
  });

  it("/plan with new instructions while a plan is pending revises it", async () => {
    await start([submitV2]);
    const v1 = seedV1();
    await fx.app.deliver("issue_comment", commentPayload({ body: "/plan also add a test", cloneUrl: fx.repo.url }));
    expect(lastTask()).toMatch(/NEWEST feedback \(on v1, by @maintainer, via plan\)\nalso add a test/);
    expectV2(v1.id);
  });

  it("a plain comment by an allowed user is feedback, and the history keeps older feedback", async () => {
    await start([submitV2, { toolCalls: [{ name: "submit_plan", arguments: samplePlan() }] }]);
    const v1 = seedV1();
    await fx.app.deliver(
      "issue_comment",
      commentPayload({ body: "Please reuse src/retry.js.", cloneUrl: fx.repo.url }),
    );
    expectV2(v1.id);
    expect(fx.github.reactions.at(-1)?.content).toBe("eyes");
    // A read-only user's comment is not feedback.
    await fx.app.deliver(
      "issue_comment",
      commentPayload({ body: "I think it should be v3!", login: "reader", cloneUrl: fx.repo.url }),
    );
    expect(fx.model.requests).toHaveLength(1);
    await fx.app.deliver(
      "issue_comment",
      commentPayload({ body: "Actually, go back to the first approach.", cloneUrl: fx.repo.url }),
    );
    const task = lastTask();
    expect(task).toMatch(/Earlier feedback \(on v1, by @maintainer, via comment\)\nPlease reuse src\/retry.js./);
    expect(task).toMatch(/NEWEST feedback \(on v2, by @maintainer, via comment\)\nActually, go back/);
    expect(fx.github.botComments().at(-1)!.body).toMatch(/^## 📋 Plan v3/);
  });

  it("plain comments are not feedback when the repository says command-only", async () => {
    fx.repo.commit({ ".github/blueprint.yml": "feedback: command-only\n" }, "configure blueprint");
    await start([submitV2]);
    seedV1();
    await fx.app.deliver(
      "issue_comment",
      commentPayload({ body: "Please reuse src/retry.js.", cloneUrl: fx.repo.url }),
    );
    expect(fx.model.requests).toHaveLength(0);
    expect(fx.github.botComments()).toHaveLength(1);
  });

  it("a request-changes review revises with its body and inline comments", async () => {
    const headSha = fx.repo.commit({ "src/feature.js": "f\n" }, "feature", "feature");
    gitIn(fx.repo.bare, ["update-ref", "refs/pull/1/head", headSha]);
    await start([submitV2], {
      pullRequest: { headRef: "feature", headSha, baseRef: "main" },
      reviewComments: [{ path: "src/client.js", line: 1, body: "Wrap this call, do not replace it." }],
    });
    const v1 = fx.seedPlan(samplePlan(), { head: { ref: "feature", sha: headSha, sameRepo: true } });
    const review = webhookExample("pull_request_review", (e) => e.action === "submitted");
    review.review = {
      ...review.review,
      id: 555,
      state: "changes_requested",
      body: "Not like this.",
      commit_id: headSha,
      user: { ...review.review.user, login: "maintainer", type: "User" },
    };
    review.sender = { ...review.sender, login: "maintainer", type: "User" };
    review.pull_request.number = 1;
    review.repository.clone_url = fx.repo.url;
    review.repository.default_branch = "main";
    review.installation = { id: 42, node_id: "x" };
    await fx.app.deliver("pull_request_review", review);
    const task = lastTask();
    expect(task).toMatch(
      /NEWEST feedback \(on v1, by @maintainer, via review\)\nNot like this.\n- `src\/client.js:1`: Wrap this call, do not replace it./,
    );
    expectV2(v1.id);
  });

  it("/build on v1 after v2 exists is refused", async () => {
    await start([submitV2]);
    seedV1();
    await fx.app.deliver("issue_comment", commentPayload({ body: "/revise smaller please", cloneUrl: fx.repo.url }));
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build v1", cloneUrl: fx.repo.url }));
    expect(fx.github.botComments().at(-1)!.body).toMatch(/Plan v1 was superseded by v2/);
    expect(() => fx.repo.head("blueprint/issue-1")).toThrow();
  });

  it("a question survives a restart: the answer resumes planning in the same comment", async () => {
    await start([
      { toolCalls: [{ name: "read_file", arguments: { path: "src/client.js" } }] },
      { toolCalls: [{ name: "ask_user", arguments: { question: "Should retries apply to POST requests too?" } }] },
      { toolCalls: [{ name: "submit_plan", arguments: samplePlan() }] },
    ]);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/plan add retries", cloneUrl: fx.repo.url }));
    const asked = fx.github.botComments().at(-1)!;
    expect(asked.body).toContain("Should retries apply to POST requests too?");
    expect(stateOf(asked.body)).toMatchObject({
      status: "awaiting_answer",
      questionMode: "plan",
      explored: ["src/client.js"],
    });
    // /build while waiting is refused.
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    expect(fx.github.botComments().at(-1)!.body).toMatch(/no plan to build/i);

    // A new app instance: nothing shared but GitHub.
    const restarted = await startTestApp({ OPENAI_BASE_URL: fx.model.url });
    await restarted.deliver(
      "issue_comment",
      commentPayload({ body: "Only idempotent ones: GET and HEAD.", cloneUrl: fx.repo.url }),
    );
    const task = lastTask();
    expect(task).toContain(
      "Q: Should retries apply to POST requests too?\nA (@maintainer): Only idempotent ones: GET and HEAD.",
    );
    expect(task).toContain("# Request from @maintainer\n\nadd retries");
    expect(task).toContain("src/client.js");
    const plan = fx.github.comments.find((c) => c.id === asked.id)!;
    expect(plan.body).toMatch(/^## 📋 Plan v1/);
    expect(stateOf(plan.body).answers).toEqual([
      {
        question: "Should retries apply to POST requests too?",
        answer: "Only idempotent ones: GET and HEAD.",
        author: "maintainer",
      },
    ]);
  });

  it("/cancel withdraws a waiting question", async () => {
    await start([{ toolCalls: [{ name: "ask_user", arguments: { question: "Which client?" } }] }]);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/plan", cloneUrl: fx.repo.url }));
    const asked = fx.github.botComments().at(-1)!;
    await fx.app.deliver("issue_comment", commentPayload({ body: "/cancel", cloneUrl: fx.repo.url }));
    const withdrawn = fx.github.comments.find((c) => c.id === asked.id)!;
    expect(withdrawn.body).toMatch(/^## ⏹️ Question withdrawn/);
    expect(stateOf(withdrawn.body)).toMatchObject({ status: "cancelled", question: null });
    // A later plain comment is no longer taken as an answer.
    await fx.app.deliver("issue_comment", commentPayload({ body: "The HTTP one.", cloneUrl: fx.repo.url }));
    expect(fx.model.requests).toHaveLength(1);
  });
});
