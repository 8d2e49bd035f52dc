import nock from "nock";
import { afterEach, beforeEach, expect, it } from "vitest";
import { readStateMarker } from "../../src/github/state-marker.js";
import { createBareRepo, gitIn, type BareRepo } from "../helpers/git-repo.js";
import { githubDouble, type GitHubDouble } from "../helpers/github-double.js";
import { samplePlan, startModelServer, type ModelServer, type Script, type ModelRequest } from "../helpers/model-server.js";
import { commentPayload, startTestApp, webhookExample, type TestApp } from "../helpers/app.js";
import { pendingState, planCommentBody } from "../helpers/plan-state.js";
import type { ThreadState } from "../../src/workflow/state.js";

const threeSteps = samplePlan({
  verification: [],
  steps: [
    { id: "S1", title: "Add a retry helper", details: "", files: ["src/retry.js"], deps: [] },
    { id: "S2", title: "Use the helper", details: "", files: ["src/client.js"], deps: ["S1"] },
    { id: "S3", title: "Document retries", details: "", files: ["README.md"], deps: [] },
  ],
});
const stepOf = (request: ModelRequest) => /^Step (S\d+): (.*)/.exec(String(request.messages[1]?.content))?.slice(1, 3).join(": ");
const stateOf = (body: string) => {
  const read = readStateMarker(body);
  if (read.kind !== "ok") throw new Error(`no state: ${read.kind}`);
  return read.state;
};

let repo: BareRepo;
let github: GitHubDouble;
let model: ModelServer | null = null;
let app: TestApp;

beforeEach(() => {
  nock.disableNetConnect();
  nock.enableNetConnect("127.0.0.1");
  repo = createBareRepo({ "README.md": "# Hello\n", "src/client.js": "x\n" });
});

afterEach(async () => {
  await model?.close();
  model = null;
  nock.cleanAll();
  nock.enableNetConnect();
});

async function start(script: Script, options: Parameters<typeof githubDouble>[0] = {}) {
  github = githubDouble({ permissions: { maintainer: "write" }, ...options });
  model = await startModelServer(script);
  app = await startTestApp({ OPENAI_BASE_URL: model.url });
}

function seed(overrides: Partial<ThreadState> = {}) {
  return github.addBotComment(planCommentBody(pendingState(threeSteps, { base: { branch: "main", sha: repo.head() }, ...overrides })));
}

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
  await app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: repo.url }));

  expect(model!.requests.map(stepOf)).toEqual(["S3: Document retries in the README", "S3: Document retries in the README"]);
  expect(repo.log("blueprint/issue-1")).toEqual(["S3: Document retries in the README", "initial commit"]);
  const body = github.comments.find((c) => c.id === plan.id)!.body;
  expect(body).toContain("Built the plan as edited by hand: S1 was ticked by hand, so it is treated as done and skipped.");
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
  await app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: repo.url }));
  expect(model!.requests).toHaveLength(0);
  const reply = github.botComments().at(-1)!.body;
  expect(reply).toContain("edited in a way Blueprint cannot build");
  expect(reply).toContain("step S2 depends on S1, which is not a step of this plan");
});

it("a corrupted marker is not trusted", async () => {
  await start([]);
  const plan = seed();
  plan.body = plan.body.replace(/v1\.([A-Za-z0-9_-]{10})/, (_, chars: string) => `v1.${chars.split("").reverse().join("")}`);
  await app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: repo.url }));
  expect(model!.requests).toHaveLength(0);
  expect(github.botComments().at(-1)!.body).toMatch(/hidden state is damaged/);
});

it("new commits on the pull request make the plan stale; /build explains, --force builds", async () => {
  const planned = repo.commit({ "a.txt": "a\n" }, "a", "feature");
  gitIn(repo.bare, ["update-ref", "refs/pull/1/head", planned]);
  const moved = repo.commit({ "a.txt": "b\n" }, "b", "feature");
  gitIn(repo.bare, ["update-ref", "refs/pull/1/head", moved]);
  await start(
    [
      { toolCalls: [{ name: "write_file", arguments: { path: "src/retry.js", content: "r\n" } }] },
      { toolCalls: [{ name: "complete_step", arguments: { step_id: "S1", summary: "done" } }] },
    ],
    { pullRequest: { headRef: "feature", headSha: moved, baseRef: "main" } },
  );
  const plan = github.addBotComment(
    planCommentBody(pendingState(samplePlan({ verification: [], steps: [{ id: "S1", title: "Only", details: "", files: [], deps: [] }] }), { base: { branch: "main", sha: repo.head() }, head: { ref: "feature", sha: planned, sameRepo: true } })),
  );
  const sync = webhookExample("pull_request", (e) => e.action === "synchronize" || e.action === "opened");
  sync.action = "synchronize";
  sync.number = 1;
  sync.pull_request.number = 1;
  sync.pull_request.head.sha = moved;
  sync.repository.clone_url = repo.url;
  sync.installation = { id: 42, node_id: "x" };
  await app.deliver("pull_request", sync);
  const marked = github.comments.find((c) => c.id === plan.id)!.body;
  expect(marked).toContain("⚠️ **Stale:** new commits were pushed to the pull request");
  expect(stateOf(marked).stale).toMatch(/new commits/);

  await app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: repo.url, isPullRequest: true }));
  expect(model!.requests).toHaveLength(0);
  expect(github.botComments().at(-1)!.body).toMatch(/`\/plan` to re-plan, or `\/build --force`/);

  await app.deliver("issue_comment", commentPayload({ body: "/build --force", cloneUrl: repo.url, isPullRequest: true }));
  expect(repo.log("feature")).toEqual(["S1: Only", "b", "a", "initial commit"]);
});

it("a base that moved under the plan's files makes an issue's plan stale", async () => {
  await start([]);
  seed();
  repo.commit({ "src/client.js": "changed upstream\n" }, "upstream change");
  await app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: repo.url }));
  expect(model!.requests).toHaveLength(0);
  const reply = github.botComments().at(-1)!.body;
  expect(reply).toMatch(/The plan is stale: `main` moved .* changed files the plan names: `src\/client.js`/);
  expect(stateOf(github.botComments()[0]!.body).stale).toMatch(/src\/client.js/);
});
