import { readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { gitIn } from "../helpers/git-repo.js";
import { samplePlan, type ModelRequest, type Script } from "../helpers/model-server.js";
import { commentPayload, reviewPayload } from "../helpers/app.js";
import { useAppFixture } from "../helpers/app-fixture.js";

const CODEOWNERS = [
  "# Who owns what",
  "*.md       @docs-writer",
  "/src/      @alice @octo-org/backend",
  "/src/generated/",
].join("\n");
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
    {
      id: "S2",
      title: "Use the helper",
      details: "Edit src/client.js",
      files: ["src/client.js", "src/generated/api.js"],
      deps: ["S1"],
    },
    { id: "S3", title: "Document retries", details: "README", files: ["README.md"], deps: [] },
  ],
});
const write = (path: string, content: string) => ({
  toolCalls: [{ name: "write_file", arguments: { path, content } }],
});
const complete = (id: string) => ({
  toolCalls: [{ name: "complete_step", arguments: { step_id: id, summary: `did ${id}` } }],
});
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
    expect(fx.github.requests.filter((r) => r.path === "/orgs/octo-org/teams/backend/memberships/carol")).toHaveLength(
      1,
    );
  });

  it("counts a team member as an owner: /build S2 by a member of @octo-org/backend builds S1 and S2", async () => {
    await start([write("src/retry.js", "x\n"), complete("S1"), write("src/client.js", "y\n"), complete("S2")]);
    fx.seedPlan(plan);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build S2", login: "bob", cloneUrl: fx.repo.url }));

    expect(fx.model.requests.map(stepOf)).toEqual(["S1", "S1", "S2", "S2"]);
    expect(fx.repo.log("blueprint/issue-1")).toEqual([
      "S2: Use the helper",
      "S1: Add a retry helper",
      "initial commit",
    ]);
    expect(fx.github.requests.some((r) => r.path === "/orgs/octo-org/teams/backend/memberships/bob")).toBe(true);
  });

  it("lets a code owner's approving review build the pull request", async () => {
    const headSha = fx.repo.commit({ "src/feature.js": "f\n" }, "feature work", "feature");
    gitIn(fx.repo.bare, ["update-ref", "refs/pull/1/head", headSha]);
    await start([write("src/retry.js", "x\n"), complete("S1")], {
      pullRequest: { headRef: "feature", headSha, baseRef: "main" },
    });
    fx.seedPlan(
      samplePlan({
        verification: [],
        steps: [{ id: "S1", title: "Add a retry helper", details: "", files: ["src/retry.js"], deps: [] }],
      }),
      {
        head: { ref: "feature", sha: headSha, sameRepo: true },
      },
    );
    await fx.app.deliver(
      "pull_request_review",
      reviewPayload({ state: "approved", commitId: headSha, login: "alice", cloneUrl: fx.repo.url }),
    );

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

  describe("what a step wrote", () => {
    const docsPlan = (files: string[]) =>
      samplePlan({
        verification: [],
        steps: [{ id: "S1", title: "Document retries", details: "README", files, deps: [] }],
      });
    const writesBoth = [write("README.md", "# Retries\n"), write("src/client.js", "owned code\n"), complete("S1")];
    const buildBy = (login: string) =>
      fx.app.deliver("issue_comment", commentPayload({ body: "/build", login, cloneUrl: fx.repo.url }));
    const branches = () => gitIn(fx.repo.bare, ["branch", "--list", "blueprint/*"]);
    /** The refs Blueprint keeps in its mirror of the test repository (held commits). */
    const heldRefs = () => {
      const mirrors = path.join(fx.app.workdir, "mirrors");
      return readdirSync(mirrors)
        .filter((name) => name.endsWith(".git"))
        .flatMap((name) =>
          gitIn(path.join(mirrors, name), ["for-each-ref", "--format=%(refname) %(objectname)", "refs/blueprint/"])
            .split("\n")
            .filter(Boolean),
        );
    };

    /**
     * docs-writer approves a plan whose only step lists README.md; the step also changes src/client.js, which alice
     * owns.
     */
    async function heldStep(script = writesBoth) {
      await start(script);
      const planComment = fx.seedPlan(docsPlan(["README.md"]));
      await buildBy("docs-writer");
      return planComment;
    }

    it("holds a step that lists README.md but changes an owned src file: nothing pushed, unticked, the files and their owners named", async () => {
      const planComment = await heldStep();

      expect(branches()).toBe("");
      const held = fx.github.botComments().at(-1)?.body ?? "";
      expect(held).toContain("Blueprint held S1 (Document retries) before pushing it.");
      expect(held).toContain("per `.github/CODEOWNERS` on `main`");
      expect(held).toContain("- `src/client.js` (@alice, @octo-org/backend)");
      // README.md is covered by docs-writer's approval: only what lacks an owner's approval is listed.
      expect(held).not.toContain("`README.md`");
      expect(held).toContain("Approvals of this plan so far: @docs-writer (`/build`).");
      const state = fx.stateOf(planComment.body);
      expect(state.steps.S1).toMatchObject({
        status: "failed",
        held: { commit: expect.stringMatching(/^[0-9a-f]{40}$/) },
      });
      expect(state.approvals).toEqual([{ login: "docs-writer", via: "build", at: expect.any(String) }]);
      expect(fx.visible(planComment.body)).toContain("Build held before pushing S1");
      expect(fx.visible(planComment.body)).toMatch(/- \[ \] \*\*S1\*\* ❌ Document retries/);
      // The held commit is kept in the mirror, under Blueprint's own ref.
      expect(heldRefs()).toEqual([`refs/blueprint/held/1/${planComment.id}/S1 ${state.steps.S1?.held?.commit}`]);
    });

    it("pushes the held commit, without building the step again, once the file's owner approves", async () => {
      const planComment = await heldStep();
      const heldCommit = fx.stateOf(planComment.body).steps.S1?.held?.commit;
      const asked = fx.model.requests.length;

      await buildBy("alice");

      expect(fx.model.requests).toHaveLength(asked);
      expect(fx.repo.log("blueprint/issue-1")).toEqual(["S1: Document retries", "initial commit"]);
      expect(gitIn(fx.repo.bare, ["rev-parse", "blueprint/issue-1"]).trim()).toBe(heldCommit);
      const state = fx.stateOf(planComment.body);
      expect(state.steps.S1).toMatchObject({ status: "done", commit: heldCommit });
      expect(state.approvals.map((approval) => approval.login)).toEqual(["docs-writer", "alice"]);
      expect(heldRefs()).toEqual([]);
      // The step changed a file its plan does not list: the report and the pull request say so.
      expect(fx.visible(planComment.body)).toContain("- **S1** outside the plan: `src/client.js`");
      expect(fx.github.pulls[0]?.body).toContain("- **S1** outside the plan: `src/client.js`");
    });

    it("builds a held step again when its commit is not on the server that resumes the build, and says so", async () => {
      const planComment = await heldStep([...writesBoth, write("README.md", "# Retries, again\n"), complete("S1")]);
      // As if the build resumed on another machine: this mirror has no held commit.
      const mirrors = path.join(fx.app.workdir, "mirrors");
      for (const name of readdirSync(mirrors).filter((entry) => entry.endsWith(".git")))
        gitIn(path.join(mirrors, name), ["update-ref", "-d", `refs/blueprint/held/1/${planComment.id}/S1`]);
      const asked = fx.model.requests.length;

      await buildBy("alice");

      expect(fx.model.requests.length).toBeGreaterThan(asked);
      expect(fx.repo.log("blueprint/issue-1")).toEqual(["S1: Document retries", "initial commit"]);
      expect(gitIn(fx.repo.bare, ["show", "blueprint/issue-1:README.md"])).toBe("# Retries, again\n");
      expect(fx.visible(planComment.body)).toMatch(
        /S1's held commit `[0-9a-f]{7}` is not on the Blueprint server that resumed the build .*so S1 was built again/,
      );
    });

    it("no longer lets owning one file of a step cover another owned file of it", async () => {
      await start([]);
      const planComment = fx.seedPlan(docsPlan(["README.md", "src/client.js"]));
      await buildBy("docs-writer");

      expect(fx.model.requests).toHaveLength(0);
      const reply = fx.github.botComments().at(-1)?.body ?? "";
      expect(reply).toContain("@docs-writer's approval is recorded, but");
      expect(reply).toContain("- **S1** Document retries: `src/client.js` (@alice, @octo-org/backend)");
      expect(reply).not.toContain("`README.md` (");
      // Recorded, so that the next owner's approval adds up with it.
      expect(fx.stateOf(planComment.body).approvals.map((approval) => approval.login)).toEqual(["docs-writer"]);
    });

    it("stops counting an approval given before a hand edit of the plan", async () => {
      await start([]);
      const planComment = fx.seedPlan(docsPlan(["README.md", "src/client.js"]));
      const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
      const early = commentPayload({ body: "/build", login: "docs-writer", cloneUrl: fx.repo.url });
      early.comment.created_at = minutesAgo(2);
      await fx.app.deliver("issue_comment", early);
      expect(fx.stateOf(planComment.body).approvals.map((approval) => approval.login)).toEqual(["docs-writer"]);
      // A maintainer rewords the step after docs-writer approved, before alice does.
      planComment.body = planComment.body.replace(
        "- [ ] **S1** Document retries",
        "- [ ] **S1** Document retries well",
      );
      planComment.updated_at = minutesAgo(1);

      await buildBy("alice");

      expect(fx.model.requests).toHaveLength(0);
      expect(fx.github.botComments().at(-1)?.body).toContain(
        "- **S1** Document retries well: `README.md` (@docs-writer)",
      );
      expect(fx.stateOf(planComment.body).approvals.map((approval) => approval.login)).toEqual(["alice"]);
    });

    it("adds up approvals: a /build by one owner and an approving review by another cover a step changing files of both", async () => {
      const headSha = fx.repo.commit({ "src/feature.js": "f\n" }, "feature work", "feature");
      gitIn(fx.repo.bare, ["update-ref", "refs/pull/1/head", headSha]);
      await start(writesBoth, { pullRequest: { headRef: "feature", headSha, baseRef: "main" } });
      const planComment = fx.seedPlan(docsPlan(["README.md", "src/client.js"]), {
        head: { ref: "feature", sha: headSha, sameRepo: true },
      });

      await fx.app.deliver(
        "issue_comment",
        commentPayload({ body: "/build", login: "docs-writer", cloneUrl: fx.repo.url, isPullRequest: true }),
      );
      expect(fx.model.requests).toHaveLength(0);
      await fx.app.deliver(
        "pull_request_review",
        reviewPayload({ state: "approved", commitId: headSha, login: "alice", cloneUrl: fx.repo.url }),
      );

      expect(fx.repo.log("feature")).toEqual(["S1: Document retries", "feature work", "initial commit"]);
      expect(fx.stateOf(planComment.body).approvals).toEqual([
        { login: "docs-writer", via: "build", at: expect.any(String) },
        { login: "alice", via: "review", at: expect.any(String) },
      ]);
    });

    it("does not push an unfinished step's changes to files no owner approved", async () => {
      const blocked = {
        toolCalls: [
          { name: "complete_step", arguments: { step_id: "S1", summary: "cannot finish", outcome: "blocked" } },
        ],
      };
      const planComment = await heldStep([write("src/client.js", "owned code\n"), blocked]);

      expect(branches()).toBe("");
      expect(fx.visible(planComment.body)).toContain(
        "S1's unfinished changes were not pushed: they change files that need a code owner's approval",
      );
    });

    it("matches an owner named by e-mail to the account showing that public e-mail, and no other account", async () => {
      fx.repo.commit({ ".github/CODEOWNERS": "/src/ Erin@Example.com\n" }, "owners by e-mail");
      const users = { erin: { id: 5, email: "erin@example.com" }, mallory: { id: 6, email: "mallory@example.com" } };
      await start([write("src/retry.js", "x\n"), complete("S1")], {
        permissions: { ...PEOPLE, erin: "write", mallory: "write" },
        users,
      });
      fx.seedPlan(
        samplePlan({
          verification: [],
          steps: [{ id: "S1", title: "Add a retry helper", details: "", files: ["src/retry.js"], deps: [] }],
        }),
      );

      await buildBy("mallory");
      expect(fx.model.requests).toHaveLength(0);
      expect(fx.github.botComments().at(-1)?.body).toContain(
        "- **S1** Add a retry helper: `src/retry.js` (Erin@Example.com)",
      );
      await buildBy("erin");

      expect(fx.repo.log("blueprint/issue-1")).toEqual([
        "S1: Add a retry helper",
        "owners by e-mail",
        "initial commit",
      ]);
      expect(fx.github.requests.some((r) => r.path === "/users/erin")).toBe(true);
    });
  });

  it("lists files changed outside the plan's files with approvers: write too (a directory entry covers what is under it)", async () => {
    fx.repo.commit({ ".github/blueprint.yml": "approvers: write\n" }, "configure");
    await start([write("docs/guide.md", "guide\n"), write("src/x.js", "x\n"), complete("S1")]);
    const planComment = fx.seedPlan(
      samplePlan({
        verification: [],
        steps: [{ id: "S1", title: "Write the guide", details: "", files: ["docs/"], deps: [] }],
      }),
    );
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", login: "carol", cloneUrl: fx.repo.url }));

    expect(fx.repo.log("blueprint/issue-1")).toEqual(["S1: Write the guide", "configure", "initial commit"]);
    // docs/guide.md is under the plan's `docs/`: only src/x.js is listed.
    for (const body of [fx.visible(planComment.body), fx.github.pulls[0]?.body ?? ""])
      expect(body).toContain("- **S1** outside the plan: `src/x.js`\n");
  });
});
