import { describe, expect, it } from "vitest";
import { commentPayload } from "../helpers/app.js";
import { useAppFixture, visible } from "../helpers/app-fixture.js";
import { samplePlan } from "../helpers/model-server.js";

/**
 * docs/workflow.md: a pull request is ready for review only while the plan's checks pass, also after it was ready once.
 */

const plan = samplePlan({
  verification: ["test ! -f broken.txt"],
  steps: [
    { id: "S1", title: "Add the retry helper", details: "Create src/retry.js", files: ["src/retry.js"], deps: [] },
    { id: "S2", title: "Add notes", details: "Create broken.txt", files: ["broken.txt"], deps: ["S1"] },
  ],
});
const write = (path: string, content: string) => ({
  toolCalls: [{ name: "write_file", arguments: { path, content } }],
});
const complete = (id: string) => ({
  toolCalls: [{ name: "complete_step", arguments: { step_id: id, summary: `did ${id}` } }],
});

describe("a ready pull request whose later build fails verification", () => {
  const fx = useAppFixture({ files: { "README.md": "# Hello\n" } });

  it("is turned back into a draft, and the plan comment says why", async () => {
    await fx.start([write("src/retry.js", "x\n"), complete("S1"), write("broken.txt", "oops\n"), complete("S2")]);
    const seeded = fx.seedPlan(plan);

    // S1 only: the check passes, so the pull request opens ready for review.
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build S1", cloneUrl: fx.repo.url }));
    expect(fx.github.pulls).toHaveLength(1);
    expect(fx.github.pulls[0]?.draft).toBe(false);
    const toDraft = () =>
      fx.github.requests.filter((request) => JSON.stringify(request.body).includes("convertPullRequestToDraft"));
    expect(toDraft()).toHaveLength(0);

    // S2 makes the check fail: the same pull request goes back to draft.
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    expect(fx.github.pulls).toHaveLength(1);
    expect(fx.github.pulls[0]?.draft).toBe(true);
    expect(toDraft()).toHaveLength(1);
    expect(fx.github.pulls[0]?.body).toContain("❌ <code>test ! -f broken.txt</code> — exit 1");
    const shown = visible(fx.github.comments.find((comment) => comment.id === seeded.id)?.body ?? "");
    expect(shown).toContain(
      "Built, but verification failed:** `test ! -f broken.txt` (exit 1) — draft pull request https://github.com/",
    );
  });
});
