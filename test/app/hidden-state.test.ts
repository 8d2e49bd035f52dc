import { deflateRawSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { deriveStateKey } from "../../src/github/state-marker.js";
import { canonicalJson } from "../../src/plan/hash.js";
import type { ThreadState } from "../../src/workflow/state.js";
import { gitIn } from "../helpers/git-repo.js";
import type { GitHubDoubleOptions } from "../helpers/github-double.js";
import { samplePlan, type Script } from "../helpers/model-server.js";
import { commentPayload, webhookExample } from "../helpers/app.js";
import { useAppFixture } from "../helpers/app-fixture.js";
import { decodeState, pendingState, planCommentBody, testSeal } from "../helpers/plan-state.js";

// docs/security.md: the hidden plan state is Blueprint's alone, and never overrides what people see.
const onlyStep = samplePlan({
  verification: [],
  steps: [{ id: "S1", title: "Only step", details: "", files: ["README.md"], deps: [] }],
});
const write = (path: string, content: string) => ({
  toolCalls: [{ name: "write_file", arguments: { path, content } }],
});
const complete = (id: string) => ({
  toolCalls: [{ name: "complete_step", arguments: { step_id: id, summary: `did ${id}` } }],
});
const buildsS1: Script = [write("README.md", "# Hello\n\nRetries.\n"), complete("S1")];

const fx = useAppFixture({
  files: { "README.md": "# Hello\n" },
  permissions: { maintainer: "write", "helper-bot[bot]": "write" },
});
const start = (script: Script, github: GitHubDoubleOptions = {}, env: Record<string, string> = {}) =>
  fx.start(script, env, { github });
const planState = (overrides: Partial<ThreadState> = {}) =>
  pendingState(onlyStep, { base: { branch: "main", sha: fx.repo.head() }, ...overrides });
const branches = () =>
  gitIn(fx.repo.bare, ["for-each-ref", "--format=%(refname:short)", "refs/heads/"]).trim().split("\n");
const lastReply = () => fx.github.botComments().at(-1)?.body ?? "";
const build = (commentId?: number) =>
  fx.app.deliver(
    "issue_comment",
    commentPayload({ body: "/build", cloneUrl: fx.repo.url, ...(commentId ? { commentId } : {}) }),
  );

describe("the hidden state only Blueprint can write", () => {
  it("refuses a marker copied from another thread's plan comment", async () => {
    await start([]);
    // Issue #2's plan, marker and all, pasted into the plan comment on issue #1.
    fx.github.addBotComment(() => planCommentBody(planState({ requestedBy: "someone-else" }), testSeal(900, 2)));
    await build();
    expect(fx.model.requests).toHaveLength(0);
    expect(lastReply()).toMatch(
      /hidden state is damaged \(the state marker's signature does not match: it was edited, or copied from another comment\)/,
    );
    expect(lastReply()).toContain("Comment `/plan` to make a fresh plan.");
    expect(branches()).toEqual(["main"]);
  });

  it("refuses hidden fields edited by someone without the key", async () => {
    await start([]);
    const plan = fx.seedPlan(onlyStep);
    // Decode, add a step nobody sees and point the branch at main; keep the old signature (the key is not theirs).
    const forged = canonicalJson({ ...decodeState(plan.body), branch: "main", requestedBy: "mallory" });
    const payload = deflateRawSync(Buffer.from(forged, "utf8")).toString("base64url");
    plan.body = plan.body.replace(/v2\.[A-Za-z0-9_-]*\./, `v2.${payload}.`);
    await build();
    expect(fx.model.requests).toHaveLength(0);
    expect(lastReply()).toMatch(/hidden state is damaged .*signature does not match/);
    expect(fx.repo.log("main")).toEqual(["initial commit"]);
  });

  it("refuses a marker signed with any key but the App's", async () => {
    await start([]);
    fx.github.addBotComment((id) =>
      planCommentBody(planState(), { ...testSeal(id), key: deriveStateKey("a-guessed-secret-value") }),
    );
    await build();
    expect(fx.model.requests).toHaveLength(0);
    expect(lastReply()).toMatch(/hidden state is damaged/);
  });

  it("never takes the branch from the hidden state: a state naming `main` still builds on blueprint/issue-1", async () => {
    await start(buildsS1);
    fx.seedPlan(onlyStep, { branch: "main" });
    await build();
    expect(fx.repo.log("main")).toEqual(["initial commit"]);
    expect(fx.repo.log("blueprint/issue-1")).toEqual(["S1: Only step", "initial commit"]);
  });

  it("builds the files the visible plan names, as edited by hand, not the hidden ones", async () => {
    await start([write("docs/notes.md", "notes\n"), complete("S1")]);
    const plan = fx.seedPlan(onlyStep);
    plan.body = plan.body.replace("- [ ] **S1** Only step — `README.md`", "- [ ] **S1** Only step — `docs/notes.md`");
    await build();
    const stepMessage = String(fx.model.requests[0]?.messages[1]?.content);
    expect(stepMessage).toContain("Files: docs/notes.md");
    expect(stepMessage).not.toContain("README.md");
    const body = fx.github.comments.find((comment) => comment.id === plan.id)?.body ?? "";
    expect(body).toContain("S1's files were changed by hand.");
    expect(decodeState(body).plan?.steps[0]?.files).toEqual(["docs/notes.md"]);
  });

  it.each([
    ["with APP_ID set", {}],
    ["with APP_ID unset", { APP_ID: "" }],
  ])("counts no marker in another bot's comment, however well-formed (%s)", async (_, env) => {
    await start([], {}, env);
    // Signed correctly for its comment: only who wrote it decides that it is not Blueprint's.
    fx.github.addOtherBotComment("other-app[bot]", 999, (id) => planCommentBody(planState(), testSeal(id)));
    await build();
    expect(fx.model.requests).toHaveLength(0);
    expect(lastReply()).toBe("There is no plan to build here yet. Comment `/plan` first.");
  });
});

describe("an approval covers the revision its approver saw", () => {
  it("/build does not build a revision posted after its comment, and says how to approve that one", async () => {
    await start(buildsS1);
    const earlier = new Date(Date.now() - 60_000).toISOString();
    fx.seedPlan(onlyStep, { status: "superseded", postedAt: earlier });
    const command = fx.github.addUserComment("maintainer", "/build");
    // While the /build waited in the queue, a revision was posted.
    fx.seedPlan(onlyStep, { revision: 2, postedAt: new Date().toISOString() });
    await build(command.id);
    expect(fx.model.requests).toHaveLength(0);
    expect(lastReply()).toBe(
      "Plan v2 was posted after @maintainer's `/build`, so that command does not approve it. Read v2, then comment `/build` again (or `/build v2`) to build it.",
    );

    const again = fx.github.addUserComment("maintainer", "/build v2");
    await fx.app.deliver(
      "issue_comment",
      commentPayload({ body: "/build v2", cloneUrl: fx.repo.url, commentId: again.id }),
    );
    expect(fx.repo.log("blueprint/issue-1")).toEqual(["S1: Only step", "initial commit"]);
  });

  it("/build posted while a revision was still being made does not cover it", async () => {
    await start([]);
    // The revision's comment existed (as "Revising…") before the command, but the plan in it was posted after.
    const plan = fx.seedPlan(onlyStep, { revision: 2, postedAt: new Date(Date.now() + 60_000).toISOString() });
    const command = fx.github.addUserComment("maintainer", "/build");
    expect(command.id).toBeGreaterThan(plan.id);
    await build(command.id);
    expect(fx.model.requests).toHaveLength(0);
    expect(lastReply()).toMatch(/^Plan v2 was posted after @maintainer's `\/build`/);
  });

  it("/build in the same second as the plan: refused, unless GitHub's clock puts the plan's edit in an earlier second", async () => {
    await start(buildsS1);
    // GitHub times comments to the second; the plan's own time is Blueprint's, in milliseconds.
    const second = Math.floor(Date.now() / 1000) * 1000 - 10_000;
    const plan = fx.seedPlan(onlyStep, { postedAt: new Date(second + 700).toISOString() });
    plan.updated_at = new Date(second).toISOString();
    const command = fx.github.addUserComment("maintainer", "/build");
    command.created_at = new Date(second).toISOString();
    // The plan comment was "Planning…" before the command; the plan text and the command fell in one second.
    await build(command.id);
    expect(fx.model.requests).toHaveLength(0);
    expect(lastReply()).toBe(
      "Plan v1 was posted in the same second as @maintainer's `/build`, and GitHub times comments to the second, so Blueprint cannot tell that the command came after it. Read v1, then comment `/build` again (or `/build v1`) to build it.",
    );

    // GitHub's clock has the edit that wrote the plan in the second before: the same-second command came after it.
    plan.updated_at = new Date(second - 1000).toISOString();
    const after = fx.github.addUserComment("maintainer", "/build");
    after.created_at = new Date(second).toISOString();
    await build(after.id);
    expect(fx.repo.log("blueprint/issue-1")).toEqual(["S1: Only step", "initial commit"]);
  });

  it("a review submitted before the current revision was posted is refused; a fresh one builds", async () => {
    const headSha = fx.repo.commit({ "src/feature.js": "f\n" }, "feature work", "feature");
    gitIn(fx.repo.bare, ["update-ref", "refs/pull/1/head", headSha]);
    await start(buildsS1, { pullRequest: { headRef: "feature", headSha, baseRef: "main" } });
    fx.seedPlan(onlyStep, {
      revision: 3,
      head: { ref: "feature", sha: headSha, sameRepo: true },
      postedAt: new Date().toISOString(),
    });

    await fx.app.deliver(
      "pull_request_review",
      reviewPayload({
        login: "maintainer",
        type: "User",
        commitId: headSha,
        submittedAt: new Date(Date.now() - 60_000).toISOString(),
      }),
    );
    expect(fx.model.requests).toHaveLength(0);
    expect(lastReply()).toBe(
      "Plan v3 was posted after @maintainer's review was submitted, so the review does not approve it. Read v3, then approve the pull request again (or comment `/build`) to build it.",
    );
    expect(fx.repo.log("feature")).toEqual(["feature work", "initial commit"]);

    await fx.app.deliver(
      "pull_request_review",
      reviewPayload({
        login: "maintainer",
        type: "User",
        commitId: headSha,
        submittedAt: new Date(Date.now() + 1000).toISOString(),
      }),
    );
    expect(fx.repo.log("feature")).toEqual(["S1: Only step", "feature work", "initial commit"]);
  });

  it("an approving review by a bot starts nothing, even a bot with write access", async () => {
    const headSha = fx.repo.commit({ "src/feature.js": "f\n" }, "feature work", "feature");
    gitIn(fx.repo.bare, ["update-ref", "refs/pull/1/head", headSha]);
    await start(buildsS1, { pullRequest: { headRef: "feature", headSha, baseRef: "main" } });
    fx.seedPlan(onlyStep, { head: { ref: "feature", sha: headSha, sameRepo: true } });
    await fx.app.deliver(
      "pull_request_review",
      reviewPayload({
        login: "helper-bot[bot]",
        type: "Bot",
        commitId: headSha,
        submittedAt: new Date().toISOString(),
      }),
    );
    expect(fx.model.requests).toHaveLength(0);
    expect(fx.github.botComments()).toHaveLength(1);
    expect(fx.github.reactions).toEqual([]);
    expect(fx.repo.log("feature")).toEqual(["feature work", "initial commit"]);
  });
});

/** pull_request_review.submitted from @octokit/webhooks-examples, an approval on pull request #1. */
function reviewPayload(options: { login: string; type: "User" | "Bot"; commitId: string; submittedAt: string }) {
  const payload = webhookExample("pull_request_review", (e) => e.action === "submitted");
  payload.review.state = "approved";
  payload.review.commit_id = options.commitId;
  payload.review.submitted_at = options.submittedAt;
  payload.review.id = Math.floor(Math.random() * 1e9);
  payload.review.user = { ...payload.review.user, login: options.login, type: options.type };
  payload.sender = { ...payload.sender, login: options.login, type: options.type };
  payload.pull_request.number = 1;
  payload.repository.clone_url = fx.repo.url;
  payload.repository.default_branch = "main";
  payload.installation = { id: 42, node_id: "x" };
  return payload;
}
