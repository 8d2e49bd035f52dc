import { describe, expect, it } from "vitest";
import { commentPayload } from "../helpers/app.js";
import { stateOf, useAppFixture } from "../helpers/app-fixture.js";
import { gitIn } from "../helpers/git-repo.js";
import { samplePlan } from "../helpers/model-server.js";

const FILES = {
  "README.md": "# Hello\n",
  "src/client.js": "export async function get(url) {\n  return fetch(url);\n}\n",
};
const twoSteps = samplePlan({
  verification: [],
  steps: [
    { id: "S1", title: "Add a retry helper", details: "Create src/retry.js", files: ["src/retry.js"], deps: [] },
    { id: "S2", title: "Use the helper", details: "Edit src/client.js", files: ["src/client.js"], deps: ["S1"] },
  ],
});
const write = (path: string, content: string) => ({
  toolCalls: [{ name: "write_file", arguments: { path, content } }],
});
const complete = (id: string) => ({
  toolCalls: [{ name: "complete_step", arguments: { step_id: id, summary: "done" } }],
});
const ask = { toolCalls: [{ name: "ask_user", arguments: { question: "Retry on 404?" } }] };
/** S1 built, then a question on S2; after an answer, S2 built. */
const script = [write("src/retry.js", "x\n"), complete("S1"), ask, write("src/client.js", "y\n"), complete("S2")];
const STALE_ADVICE =
  "Comment `/cancel` to withdraw the question, then `/plan` to re-plan, or `/build --force` to build the plan anyway.";

/**
 * An answer resumes a build on the approval it was given: not when the plan went stale since (the base moved under the
 * files it names, or someone else pushed to the pull request), whatever the approval accepted when it was given; and
 * never because of Blueprint's own pushes of the earlier steps.
 */
describe("an answer that would resume a build whose plan went stale while it waited", () => {
  const fx = useAppFixture({ files: FILES });
  const planState = (id: number) => stateOf(fx.github.comments.find((comment) => comment.id === id)!.body);
  const answer = (body: string, isPullRequest = false) =>
    fx.app.deliver("issue_comment", commentPayload({ body, cloneUrl: fx.repo.url, isPullRequest }));

  it("an issue's base moved under the plan's files: the answer pushes nothing and says why; /cancel, /build --force goes on", async () => {
    await fx.start([...script, write("src/client.js", "y\n"), complete("S2")]);
    const plan = fx.seedPlan(twoSteps);
    await answer("/build");
    expect(planState(plan.id)).toMatchObject({ status: "awaiting_answer", questionMode: "build" });
    const asked = fx.model.requests.length;

    fx.repo.commit({ "src/client.js": "changed upstream\n" }, "upstream change");
    await answer("No, never on 404.");
    expect(fx.model.requests).toHaveLength(asked);
    expect(fx.repo.log("blueprint/issue-1")).toEqual(["S1: Add a retry helper", "initial commit"]);
    expect(fx.github.botComments().at(-1)!.body).toMatch(
      /^The plan is stale: `main` moved \(`[0-9a-f]{7}` → `[0-9a-f]{7}`\) and changed files the plan names: `src\/client.js`\. This happened while the build waited for an answer, so the answer does not resume it\. /,
    );
    expect(fx.github.botComments().at(-1)!.body).toContain(STALE_ADVICE);
    // The question still waits, unanswered.
    expect(planState(plan.id)).toMatchObject({ status: "awaiting_answer", question: "Retry on 404?", answers: [] });

    await answer("/cancel");
    await answer("/build --force");
    expect(fx.repo.log("blueprint/issue-1")[0]).toBe("S2: Use the helper");
  });

  it("an issue's plan approved stale with --force: the answer resumes it (what the approval accepted stands)", async () => {
    await fx.start(script);
    const plan = fx.seedPlan(twoSteps);
    fx.repo.commit({ "src/client.js": "changed upstream\n" }, "upstream change");
    await answer("/build --force");
    expect(planState(plan.id)).toMatchObject({ status: "awaiting_answer", questionMode: "build" });
    await answer("No, never on 404.");
    expect(fx.repo.log("blueprint/issue-1")[0]).toBe("S2: Use the helper");
    expect(planState(plan.id).status).toBe("built");
  });

  describe("on a pull request", () => {
    /** A pull request from `feature`, its head as GitHub shows it following the branch (Blueprint's pushes too). */
    async function pullRequestWaiting() {
      const planned = fx.repo.commit({ "a.txt": "a\n" }, "a", "feature");
      const pullRequest = { headRef: "feature", headSha: planned, baseRef: "main" };
      const follow = () => {
        pullRequest.headSha = fx.repo.head("feature");
        gitIn(fx.repo.bare, ["update-ref", "refs/pull/1/head", pullRequest.headSha]);
      };
      follow();
      await fx.start(script, {}, { github: { pullRequest } });
      const plan = fx.seedPlan(twoSteps, { head: { ref: "feature", sha: planned, sameRepo: true } });
      await answer("/build", true);
      expect(planState(plan.id)).toMatchObject({ status: "awaiting_answer", questionMode: "build" });
      follow();
      return { plan, planned, follow };
    }

    it("moved by Blueprint's own push of S1 only: the answer resumes the build", async () => {
      const { plan, planned } = await pullRequestWaiting();
      expect(fx.repo.head("feature")).not.toBe(planned);
      await answer("No, never on 404.", true);
      expect(fx.repo.log("feature")).toEqual(["S2: Use the helper", "S1: Add a retry helper", "a", "initial commit"]);
      expect(planState(plan.id).status).toBe("built");
    });

    it("moved by someone else's push: the answer pushes nothing and says why", async () => {
      const { plan, follow } = await pullRequestWaiting();
      const asked = fx.model.requests.length;
      fx.repo.commit({ "src/client.js": "theirs\n" }, "someone else's work", "feature");
      follow();
      await answer("No, never on 404.", true);
      expect(fx.model.requests).toHaveLength(asked);
      expect(fx.repo.log("feature")).toEqual(["someone else's work", "S1: Add a retry helper", "a", "initial commit"]);
      expect(fx.github.botComments().at(-1)!.body).toBe(
        `The pull request's head moved (\`${planState(plan.id).head!.sha.slice(0, 7)}\` → \`${fx.repo.head("feature").slice(0, 7)}\`) while the build waited for an answer, so the plan may be stale: the answer does not resume the build. ${STALE_ADVICE}`,
      );
      expect(planState(plan.id)).toMatchObject({ status: "awaiting_answer", answers: [] });
    });
  });
});
