import { describe, expect, it } from "vitest";
import { commentPayload } from "../helpers/app.js";
import { stateOf, useAppFixture } from "../helpers/app-fixture.js";
import { gitIn } from "../helpers/git-repo.js";
import { samplePlan } from "../helpers/model-server.js";

// A step's command that makes a nested git repository (git would run Blueprint's own git there with
// that repository's config): the build says so on the thread and commits none of it.

const plan = samplePlan({
  verification: [],
  steps: [{ id: "S1", title: "Add the sub project", details: "Create sub/f", files: ["sub/f"], deps: [] }],
});
const run = (command: string) => ({ toolCalls: [{ name: "run_command", arguments: { command, timeout_s: null } }] });
const makeNested = run(
  "git init -q sub && echo x > sub/f && git -C sub add f && git -C sub -c user.name=a -c user.email=a@example.test commit -qm nested",
);
const complete = { toolCalls: [{ name: "complete_step", arguments: { step_id: "S1", summary: "Added sub." } }] };

describe("a nested repository made by a step", () => {
  const fx = useAppFixture({ files: { "README.md": "# Hello\n" }, permissions: { maintainer: "write" } });

  it("stops the build with the reason on the thread, the step unticked and nothing pushed", async () => {
    await fx.start([makeNested, complete]);
    const seeded = fx.seedPlan(plan);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));

    const body = fx.github.comments.find((comment) => comment.id === seeded.id)?.body ?? "";
    expect(body).toContain("Build stopped:** a command left a nested git repository at `sub/` (`sub/.git`)");
    expect(body).toContain("delete `sub/.git`");
    expect(body).toMatch(/- \[ \] \*\*S1\*\*/);
    expect(stateOf(body).status).toBe("failed");
    expect(gitIn(fx.repo.bare, ["branch", "--list", "blueprint/issue-1"]).trim()).toBe("");
  });

  it("a read tool tells the agent, which deletes the nested `.git`: the files are committed as ordinary files", async () => {
    await fx.start([
      makeNested,
      { toolCalls: [{ name: "list_files", arguments: { path: null, pattern: null } }] },
      run("rm -rf sub/.git"),
      complete,
    ]);
    fx.seedPlan(plan);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));

    const toolResult = String(fx.model.requests[2]?.messages.at(-1)?.content);
    expect(toolResult).toContain("delete `sub/.git`");
    expect(gitIn(fx.repo.bare, ["ls-tree", "refs/heads/blueprint/issue-1", "sub/f"])).toMatch(/^100644 blob /);
    expect(fx.repo.show("blueprint/issue-1", "sub/f")).toBe("x\n");
  });
});
