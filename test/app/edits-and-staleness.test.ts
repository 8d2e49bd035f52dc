import { expect, it } from "vitest";
import { gitIn } from "../helpers/git-repo.js";
import type { GitHubDoubleOptions } from "../helpers/github-double.js";
import { samplePlan, type Script, type ModelRequest } from "../helpers/model-server.js";
import { commentPayload, webhookExample } from "../helpers/app.js";
import { stateOf, useAppFixture } from "../helpers/app-fixture.js";
import type { ThreadState } from "../../src/workflow/state.js";

const threeSteps = samplePlan({
  verification: [],
  steps: [
    { id: "S1", title: "Add a retry helper", details: "", files: ["src/retry.js"], deps: [] },
    { id: "S2", title: "Use the helper", details: "", files: ["src/client.js"], deps: ["S1"] },
    { id: "S3", title: "Document retries", details: "", files: ["README.md"], deps: [] },
  ],
});
const stepOf = (request: ModelRequest) =>
  /^Step (S\d+): (.*)/.exec(String(request.messages[1]?.content))?.slice(1, 3).join(": ");

const fx = useAppFixture({ files: { "README.md": "# Hello\n", "src/client.js": "x\n" } });
const start = (script: Script, github: GitHubDoubleOptions = {}) => fx.start(script, {}, { github });
const seed = (overrides: Partial<ThreadState> = {}) => fx.seedPlan(threeSteps, overrides);

it("builds a plan edited by hand as it now reads, and says so", async () => {
  await start([
    { toolCalls: [{ name: "write_file", arguments: { path: "README.md", content: "# Hello\n\nRetries!\n" } }] },
    { toolCalls: [{ name: "complete_step", arguments: { step_id: "S3", summary: "documented" } }] },
  ]);
  const plan = seed();
  // A maintainer ticks S1 (done by hand), deletes S2, rewords S3.
  plan.body = plan.body
    .replace("- [ ] **S1** Add a retry helper", "- [x] **S1** Add a retry helper")
    .replace(/^- \[ \] \*\*S2\*\*.*\n/m, "")
    .replace("**S3** Document retries", "**S3** Document retries in the README");
  await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));

  expect(fx.model.requests.map(stepOf)).toEqual([
    "S3: Document retries in the README",
    "S3: Document retries in the README",
  ]);
  expect(fx.repo.log("blueprint/issue-1")).toEqual(["S3: Document retries in the README", "initial commit"]);
  const body = fx.github.comments.find((c) => c.id === plan.id)!.body;
  expect(body).toContain(
    "Built the plan as edited by hand: S1 was ticked by hand, so it is treated as done and skipped.",
  );
  expect(body).toContain("S3 was reworded by hand.");
  expect(body).toContain("S2 was removed by hand.");
  expect(body).toContain("- [x] **S1** Add a retry helper — `src/retry.js` · ticked by hand");
  const state = stateOf(body);
  expect(state.plan?.steps.map((s) => s.id)).toEqual(["S1", "S3"]);
  expect(state.status).toBe("built");
});

it("refuses a hand edit that breaks the plan, with the reasons", async () => {
  await start([]);
  const plan = seed();
  plan.body = plan.body.replace(/^- \[ \] \*\*S1\*\*.*\n/m, "");
  await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
  expect(fx.model.requests).toHaveLength(0);
  const reply = fx.github.botComments().at(-1)!.body;
  expect(reply).toContain("edited in a way Blueprint cannot build");
  expect(reply).toContain("step S2 depends on S1, which is not a step of this plan");
});

it("a corrupted marker is not trusted", async () => {
  await start([]);
  const plan = seed();
  plan.body = plan.body.replace(
    /v2\.([A-Za-z0-9_-]{10})/,
    (_, chars: string) => `v2.${chars.split("").reverse().join("")}`,
  );
  await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
  expect(fx.model.requests).toHaveLength(0);
  expect(fx.github.botComments().at(-1)!.body).toMatch(/hidden state is damaged/);
});

it("new commits on the pull request make the plan stale; /build explains, --force builds", async () => {
  const planned = fx.repo.commit({ "a.txt": "a\n" }, "a", "feature");
  gitIn(fx.repo.bare, ["update-ref", "refs/pull/1/head", planned]);
  const moved = fx.repo.commit({ "a.txt": "b\n" }, "b", "feature");
  gitIn(fx.repo.bare, ["update-ref", "refs/pull/1/head", moved]);
  await start(
    [
      { toolCalls: [{ name: "write_file", arguments: { path: "src/retry.js", content: "r\n" } }] },
      { toolCalls: [{ name: "complete_step", arguments: { step_id: "S1", summary: "done" } }] },
    ],
    { pullRequest: { headRef: "feature", headSha: moved, baseRef: "main" } },
  );
  const plan = fx.seedPlan(
    samplePlan({ verification: [], steps: [{ id: "S1", title: "Only", details: "", files: [], deps: [] }] }),
    { head: { ref: "feature", sha: planned, sameRepo: true } },
  );
  const sync = webhookExample("pull_request", (e) => e.action === "synchronize" || e.action === "opened");
  sync.action = "synchronize";
  sync.number = 1;
  sync.pull_request.number = 1;
  sync.pull_request.head.sha = moved;
  sync.repository.clone_url = fx.repo.url;
  sync.installation = { id: 42, node_id: "x" };
  await fx.app.deliver("pull_request", sync);
  const marked = fx.github.comments.find((c) => c.id === plan.id)!.body;
  expect(marked).toContain("⚠️ **Stale:** new commits were pushed to the pull request");
  expect(stateOf(marked).stale).toMatch(/new commits/);

  await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url, isPullRequest: true }));
  expect(fx.model.requests).toHaveLength(0);
  expect(fx.github.botComments().at(-1)!.body).toMatch(/`\/plan` to re-plan, or `\/build --force`/);

  await fx.app.deliver(
    "issue_comment",
    commentPayload({ body: "/build --force", cloneUrl: fx.repo.url, isPullRequest: true }),
  );
  expect(fx.repo.log("feature")).toEqual(["S1: Only", "b", "a", "initial commit"]);
});

it("a base that moved under the plan's files makes an issue's plan stale", async () => {
  await start([]);
  seed();
  fx.repo.commit({ "src/client.js": "changed upstream\n" }, "upstream change");
  await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
  expect(fx.model.requests).toHaveLength(0);
  const reply = fx.github.botComments().at(-1)!.body;
  expect(reply).toMatch(/The plan is stale: `main` moved .* changed files the plan names: `src\/client.js`/);
  expect(stateOf(fx.github.botComments()[0]!.body).stale).toMatch(/src\/client.js/);
});
