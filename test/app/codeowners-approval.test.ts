import { describe, expect, it } from "vitest";
import { gitIn } from "../helpers/git-repo.js";
import { samplePlan, type ModelRequest, type Script } from "../helpers/model-server.js";
import { commentPayload, reviewPayload } from "../helpers/app.js";
import { useAppFixture } from "../helpers/app-fixture.js";

const CODEOWNERS = ["# Who owns what", "*.md       @docs-writer", "/src/      @alice @octo-org/backend", "/src/generated/"].join("\n");
const FILES = {
  "README.md": "# Hello\n",
  "src/client.js": "export const get = (url) => fetch(url);\n",
  ".github/blueprint.yml": "approvers: codeowners\n",
  ".github/CODEOWNERS": `${CODEOWNERS}\n`,
};
const PEOPLE = { maintainer: "write", alice: "write", bob: "write", carol: "write", "docs-writer": "write" };
const TEAMS = { "octo-org/backend": ["bob"] };

const plan = samplePlan({
  verification: [],
  steps: [
    { id: "S1", title: "Add a retry helper", details: "Create src/retry.js", files: ["src/retry.js"], deps: [] },
    { id: "S2", title: "Use the helper", details: "Edit src/client.js", files: ["src/client.js", "src/generated/api.js"], deps: ["S1"] },
    { id: "S3", title: "Document retries", details: "README", files: ["README.md"], deps: [] },
  ],
});
const write = (path: string, content: string) => ({ toolCalls: [{ name: "write_file", arguments: { path, content } }] });
const complete = (id: string) => ({ toolCalls: [{ name: "complete_step", arguments: { step_id: id, summary: `did ${id}` } }] });
const stepOf = (request: ModelRequest) => /^Step (S\d+):/.exec(String(request.messages[1]?.content))?.[1];

describe("approvers: codeowners", () => {
  const fx = useAppFixture({ files: FILES, permissions: PEOPLE });
  const start = (script: Script, github = {}) => fx.start(script, {}, { github: { teams: TEAMS, ...github } });

  it("refuses a non-owner's /build, naming whose approval is missing for which files", async () => {
    await start([]);
    fx.seedPlan(plan);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", login: "carol", cloneUrl: fx.repo.url }));

    expect(fx.model.requests).toHaveLength(0);
    expect(gitIn(fx.repo.bare, ["branch", "--list", "blueprint/*"])).toBe("");
    const reply = fx.github.botComments().at(-1)?.body ?? "";
    expect(reply).toContain("@carol's approval does not count here");
    expect(reply).toContain("per `.github/CODEOWNERS` on `main`");
    expect(reply).toContain("- **S1** Add a retry helper: `src/retry.js` (@alice, @octo-org/backend)");
    // src/generated/ has no owner (its line names none), so only client.js is listed for S2.
    expect(reply).toContain("- **S2** Use the helper: `src/client.js` (@alice, @octo-org/backend)\n");
    expect(reply).toContain("- **S3** Document retries: `README.md` (@docs-writer)");
    // carol's team membership was asked once, however many files the team owns.
    expect(fx.github.requests.filter((r) => r.path === "/orgs/octo-org/teams/backend/memberships/carol")).toHaveLength(1);
  });

  it("counts a team member as an owner: /build S2 by a member of @octo-org/backend builds S1 and S2", async () => {
    await start([write("src/retry.js", "x\n"), complete("S1"), write("src/client.js", "y\n"), complete("S2")]);
    fx.seedPlan(plan);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build S2", login: "bob", cloneUrl: fx.repo.url }));

    expect(fx.model.requests.map(stepOf)).toEqual(["S1", "S1", "S2", "S2"]);
    expect(fx.repo.log("blueprint/issue-1")).toEqual(["S2: Use the helper", "S1: Add a retry helper", "initial commit"]);
    expect(fx.github.requests.some((r) => r.path === "/orgs/octo-org/teams/backend/memberships/bob")).toBe(true);
  });

  it("lets a code owner's approving review build the pull request", async () => {
    const headSha = fx.repo.commit({ "src/feature.js": "f\n" }, "feature work", "feature");
    gitIn(fx.repo.bare, ["update-ref", "refs/pull/1/head", headSha]);
    await start([write("src/retry.js", "x\n"), complete("S1")], { pullRequest: { headRef: "feature", headSha, baseRef: "main" } });
    fx.seedPlan(samplePlan({ verification: [], steps: [{ id: "S1", title: "Add a retry helper", details: "", files: ["src/retry.js"], deps: [] }] }), {
      head: { ref: "feature", sha: headSha, sameRepo: true },
    });
    await fx.app.deliver("pull_request_review", reviewPayload({ state: "approved", commitId: headSha, login: "alice", cloneUrl: fx.repo.url }));

    expect(fx.repo.log("feature")).toEqual(["S1: Add a retry helper", "feature work", "initial commit"]);
    expect(fx.github.botComments().at(-1)?.body).toContain("### Build report");
    // alice is named in CODEOWNERS herself: no team lookup needed.
    expect(fx.github.requests.some((r) => r.path.startsWith("/orgs/"))).toBe(false);
  });

  it("keeps require_other_approver: the requester may not approve even when they own the files", async () => {
    fx.repo.commit({ ".github/blueprint.yml": "approvers: codeowners\nrequire_other_approver: true\n" }, "configure");
    await start([]);
    fx.seedPlan(plan, { requestedBy: "alice" });
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build S1", login: "alice", cloneUrl: fx.repo.url }));

    expect(fx.model.requests).toHaveLength(0);
    expect(fx.github.botComments().at(-1)?.body).toMatch(/requires someone other than the plan's requester \(@alice\)/);
  });

  it("refuses when the default branch has no CODEOWNERS file, saying what to do", async () => {
    const { [".github/CODEOWNERS"]: _codeowners, ...withoutCodeOwners } = FILES;
    fx.createRepo(withoutCodeOwners);
    await start([]);
    fx.seedPlan(plan);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", login: "alice", cloneUrl: fx.repo.url }));

    expect(fx.model.requests).toHaveLength(0);
    expect(fx.github.botComments().at(-1)?.body).toMatch(/has no CODEOWNERS file .*Add one, or set `approvers: write`/);
  });
});
