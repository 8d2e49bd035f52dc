import { describe, expect, it } from "vitest";
import { gitIn } from "../helpers/git-repo.js";
import { commentPayload } from "../helpers/app.js";
import { stateOf, useAppFixture, visible } from "../helpers/app-fixture.js";
import { samplePlan, type ModelRequest } from "../helpers/model-server.js";

/**
 * Recovering steps after a crash between push and marker update counts only the commits of the
 * revision being built, and never re-ticks a step a person unticked (docs/reliability.md).
 */

const write = (path: string, content: string) => ({
  toolCalls: [{ name: "write_file", arguments: { path, content } }],
});
const complete = (id: string) => ({
  toolCalls: [{ name: "complete_step", arguments: { step_id: id, summary: `did ${id}` } }],
});
const stepOf = (request: ModelRequest) => /^Step (S\d+):/.exec(String(request.messages[1]?.content))?.[1];
const trailer = (planId: number, revision: number) => `Blueprint-Plan: ${planId}/v${revision}`;

const v2 = samplePlan({
  verification: [],
  steps: [
    {
      id: "S1",
      title: "Add a circuit breaker",
      details: "Create src/breaker.js (v2 replaces v1's retry helper)",
      files: ["src/breaker.js"],
      deps: [],
    },
    { id: "S2", title: "Document the breaker", details: "README", files: ["README.md"], deps: ["S1"] },
  ],
});

describe("recovering pushed steps", () => {
  const fx = useAppFixture({ files: { "README.md": "# Hello\n" } });

  it("step commits carry the plan revision they built as a trailer", async () => {
    await fx.start([
      write("src/breaker.js", "breaker\n"),
      complete("S1"),
      write("README.md", "# Hello\n\nBreaker.\n"),
      complete("S2"),
    ]);
    const plan = fx.seedPlan(v2);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    const trailers = gitIn(fx.repo.bare, [
      "log",
      "--format=%(trailers:key=Blueprint-Plan,valueonly)",
      "refs/heads/blueprint/issue-1",
      "-2",
    ])
      .trim()
      .split("\n")
      .filter(Boolean);
    expect(trailers).toEqual([`${plan.id}/v1`, `${plan.id}/v1`]);
  });

  it("builds a revised plan's S1 instead of ticking it with the previous revision's `S1: …` commit", async () => {
    await fx.start([
      write("src/breaker.js", "breaker\n"),
      complete("S1"),
      write("README.md", "# Hello\n\nBreaker.\n"),
      complete("S2"),
    ]);
    const base = fx.repo.head();
    // Plan v1 (an earlier comment) built its own S1, a different step, before the plan was revised.
    fx.repo.commit(
      { "src/retry.js": "v1 retry helper\n" },
      `S1: Add a retry helper\n\ndid S1\n\n${trailer(999, 1)}`,
      "blueprint/issue-1",
    );
    // v2 as /revise leaves it: revision 2, every step pending, no branch recorded.
    const plan = fx.seedPlan(v2, { revision: 2, base: { branch: "main", sha: base }, branch: null });
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));

    const body = fx.github.comments.find((comment) => comment.id === plan.id)?.body ?? "";
    expect(fx.model.requests.map(stepOf)[0], "v2's S1 must be built, not skipped").toBe("S1");
    expect(fx.repo.show("blueprint/issue-1", "src/breaker.js")).toBe("breaker\n");
    expect(visible(body)).not.toMatch(/Already done, skipped: S1/);
    expect(stateOf(body).steps.S1?.status).toBe("done");
    // If this ever fails again (it did once under a full suite's load), the plan and the branch say what happened.
    const history = gitIn(fx.repo.bare, ["log", "--format=%h %s", "refs/heads/blueprint/issue-1"]);
    expect(stateOf(body).steps.S1?.commit, `plan comment:\n${visible(body)}\nbranch:\n${history}`).toBe(
      gitIn(fx.repo.bare, ["rev-parse", "refs/heads/blueprint/issue-1~1"]).trim(),
    );
  });

  it("a step unticked by hand is built again, not re-ticked from its earlier commit of the same revision", async () => {
    await fx.start([write("src/breaker.js", "breaker v2\n"), complete("S1")]);
    const base = fx.repo.head();
    // S1 and S2 were built; a maintainer unticks S1 because its result was wrong.
    const plan = fx.seedPlan(v2, {
      base: { branch: "main", sha: base },
      branch: "blueprint/issue-1",
      status: "pending",
      steps: { S1: { status: "done" }, S2: { status: "done" } },
    });
    fx.repo.commit(
      { "src/breaker.js": "breaker v1\n" },
      `S1: Add a circuit breaker\n\ndid S1\n\n${trailer(plan.id, 1)}`,
      "blueprint/issue-1",
    );
    const comment = fx.github.comments.find((c) => c.id === plan.id);
    if (!comment) throw new Error("no plan comment");
    comment.body = comment.body.replace(/- \[x\] \*\*S1\*\*/, "- [ ] **S1**");
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build S1", cloneUrl: fx.repo.url }));

    const body = fx.github.comments.find((c) => c.id === plan.id)?.body ?? "";
    expect(visible(body)).toContain("S1 was unticked by hand, so it will be built again.");
    expect(fx.model.requests.map(stepOf), "the unticked step must be given to the agent").toContain("S1");
    expect(fx.repo.show("blueprint/issue-1", "src/breaker.js")).toBe("breaker v2\n");
  });
});
