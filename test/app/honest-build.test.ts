import { afterEach, describe, expect, it, vi } from "vitest";
import { commentPayload } from "../helpers/app.js";
import { gitIn } from "../helpers/git-repo.js";
import { stateOf, useAppFixture, visible } from "../helpers/app-fixture.js";
import { samplePlan, type ModelRequest } from "../helpers/model-server.js";
import { sleeper, untilRunning } from "../helpers/sleeper.js";
import { DEFAULT_LIMITS } from "../../src/agent/loop.js";

/** docs/workflow.md: a build never claims more than it did. */

const FILES = { "README.md": "# Hello\n" };
const twoSteps = (verification: string[]) =>
  samplePlan({
    verification,
    steps: [
      { id: "S1", title: "Add the retry helper", details: "Create src/retry.js", files: ["src/retry.js"], deps: [] },
      { id: "S2", title: "Document retries", details: "README", files: ["README.md"], deps: ["S1"] },
    ],
  });

const write = (path: string, content: string) => ({
  toolCalls: [{ name: "write_file", arguments: { path, content } }],
});
const complete = (id: string, outcome: "done" | "blocked" | null = null, summary = `did ${id}`) => ({
  toolCalls: [{ name: "complete_step", arguments: { step_id: id, summary, outcome } }],
});
const stepOf = (request: ModelRequest) => /^Step (S\d+):/.exec(String(request.messages[1]?.content))?.[1];

describe("honest builds", () => {
  const fx = useAppFixture({ files: FILES });
  const planBody = (id: number) => fx.github.comments.find((comment) => comment.id === id)?.body ?? "";

  it("a step the agent reports blocked is not ticked, not done, stops the build with its reason, and keeps its changes in a WIP commit", async () => {
    const reason = "The plan says to reuse lib/backoff.js, but no such file exists in the repository.";
    await fx.start([
      write("src/retry.js", "// half a helper\n"),
      complete("S1", "blocked", reason),
      // the next /build: S1 again, on top of the kept changes
      write("src/retry.js", "export const retry = (fn) => fn();\n"),
      complete("S1", "done"),
      write("README.md", "# Hello\n\nRetries.\n"),
      complete("S2"),
    ]);
    const plan = fx.seedPlan(twoSteps([]));
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));

    // The build stopped at S1: S2 never ran, no pull request.
    expect(fx.model.requests.map(stepOf)).toEqual(["S1", "S1"]);
    expect(fx.github.pulls).toHaveLength(0);
    // Not committed as done: the kept work is a WIP commit, not "S1: …".
    expect(fx.repo.log("blueprint/issue-1")).toEqual([
      "WIP S1 (blocked, not done): Add the retry helper",
      "initial commit",
    ]);
    expect(fx.repo.show("blueprint/issue-1", "src/retry.js")).toBe("// half a helper\n");

    const body = planBody(plan.id);
    const state = stateOf(body);
    expect(state.steps.S1?.status).not.toBe("done");
    expect(state.steps.S1).toMatchObject({ status: "failed", reason: `blocked: ${reason}` });
    expect(state.status).toBe("failed");
    const shown = visible(body);
    expect(shown).toMatch(/- \[ \] \*\*S1\*\*/);
    expect(shown).not.toMatch(/- \[x\] \*\*S1\*\*/);
    expect(shown).toContain("Build stopped at S1: the agent could not do it.");
    expect(shown).toContain(reason);
    expect(shown).not.toContain("🎉");
    // The report says where the unfinished changes are.
    expect(shown).toMatch(/S1's unfinished changes \(1 file\) are kept, not ticked, in commit `[0-9a-f]{7}`/);

    // /build resumes at S1 (the WIP commit does not count as S1 done), on top of the kept changes.
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    expect(fx.model.requests.map(stepOf)).toEqual(["S1", "S1", "S1", "S1", "S2", "S2"]);
    expect(fx.repo.log("blueprint/issue-1")).toEqual([
      "S2: Document retries",
      "S1: Add the retry helper",
      "WIP S1 (blocked, not done): Add the retry helper",
      "initial commit",
    ]);
    expect(stateOf(planBody(plan.id)).status).toBe("built");
  });

  it("on a pull request, a blocked step's WIP commit goes to its head and the plan records that head, so /build is not refused as stale", async () => {
    const headSha = fx.repo.commit({ "src/feature.js": "f\n" }, "feature work", "feature");
    gitIn(fx.repo.bare, ["update-ref", "refs/pull/1/head", headSha]);
    await fx.start(
      [write("src/retry.js", "// half\n"), complete("S1", "blocked", "Needs a decision on the backoff.")],
      {},
      { github: { pullRequest: { headRef: "feature", headSha, baseRef: "main" } } },
    );
    const plan = fx.seedPlan(twoSteps([]), { head: { ref: "feature", sha: headSha, sameRepo: true } });
    await fx.app.deliver(
      "issue_comment",
      commentPayload({ body: "/build", cloneUrl: fx.repo.url, isPullRequest: true }),
    );
    expect(fx.repo.log("feature")).toEqual([
      "WIP S1 (blocked, not done): Add the retry helper",
      "feature work",
      "initial commit",
    ]);
    expect(stateOf(planBody(plan.id)).head?.sha).toBe(fx.repo.head("feature"));
  });

  it("a step that fails after changing files keeps them in a WIP commit too, and says so", async () => {
    await fx.start([write("src/retry.js", "// started\n"), { status: 500 }]);
    const plan = fx.seedPlan(twoSteps([]));
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    expect(fx.repo.log("blueprint/issue-1")).toEqual([
      "WIP S1 (failed, not done): Add the retry helper",
      "initial commit",
    ]);
    expect(fx.repo.show("blueprint/issue-1", "src/retry.js")).toBe("// started\n");
    const body = planBody(plan.id);
    expect(stateOf(body).steps.S1).toMatchObject({ status: "failed" });
    expect(visible(body)).toMatch(/- \[ \] \*\*S1\*\* ❌/);
    expect(visible(body)).toContain("S1's unfinished changes (1 file) are kept, not ticked");
  });

  it("failing verification opens a draft pull request and names the failed check; passing it later makes the pull request ready", async () => {
    await fx.start([write("src/retry.js", "x\n"), complete("S1"), write("README.md", "# Retries\n"), complete("S2")]);
    const plan = fx.seedPlan(twoSteps(["test -f README.md", "grep -q Retries README.md"]));

    // Only S1: README.md does not mention retries yet, so the second check fails.
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build S1", cloneUrl: fx.repo.url }));
    expect(fx.github.pulls).toHaveLength(1);
    expect(fx.github.pulls[0]?.draft).toBe(true);
    let shown = visible(planBody(plan.id));
    expect(shown).toContain(
      "Built, but verification failed:** `grep -q Retries README.md` (exit 1) — draft pull request https://github.com/",
    );
    expect(shown).not.toContain("🎉");
    expect(shown).toContain("❌ 1 of 2 checks failed.");
    expect(fx.github.pulls[0]?.body).toContain("❌ <code>grep -q Retries README.md</code> — exit 1");
    expect(stateOf(planBody(plan.id)).error).toBe("verification failed: `grep -q Retries README.md` (exit 1)");

    // The rest of the plan makes the checks pass: the same pull request is marked ready for review.
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    expect(fx.github.pulls).toHaveLength(1);
    expect(fx.github.pulls[0]?.draft).toBe(false);
    expect(
      fx.github.requests.some((request) => JSON.stringify(request.body).includes("markPullRequestReadyForReview")),
    ).toBe(true);
    shown = visible(planBody(plan.id));
    expect(shown).toContain("🎉 **Built** — pull request https://github.com/");
    expect(stateOf(planBody(plan.id))).toMatchObject({ status: "built", error: null });
  });

  it("a passing build opens a ready pull request, as before", async () => {
    await fx.start([
      write("src/retry.js", "x\n"),
      complete("S1", "done"),
      write("README.md", "# Retries\n"),
      complete("S2"),
    ]);
    fx.seedPlan(twoSteps(["test -f src/retry.js"]));
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    expect(fx.github.pulls).toHaveLength(1);
    expect(fx.github.pulls[0]?.draft).toBe(false);
    expect(fx.github.requests.some((request) => request.path === "/graphql")).toBe(false);
  });

  describe("the wall-time limit is a deadline", () => {
    /**
     * The limit in fake time: `Date` and `setTimeout` are faked (the runs' clocks and deadlines, a command's kill),
     * nothing else (sockets, git, child processes run for real). The clock stands still while the steps run, so no
     * step reaches the limit however slow the machine; it moves only when the test moves it, once the awaited request
     * or command is there.
     */
    const LIMIT_MS = 30_000;
    const limits = { deps: { limits: { ...DEFAULT_LIMITS, maxWallTimeMs: LIMIT_MS } } };
    const fakeClock = () => vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    afterEach(() => void vi.useRealTimers());

    it("a model call that hangs ends the step at the deadline with a time-limit report", async () => {
      let arrived: () => void = () => {};
      const requested = new Promise<void>((resolve) => (arrived = resolve));
      // The model's own timeout and retries are far longer than the run's limit.
      const hang = () => {
        arrived();
        return { hang: true as const };
      };
      await fx.start([hang], { BLUEPRINT_MODEL_RETRIES: "3" }, limits);
      const plan = fx.seedPlan(twoSteps([]));
      fakeClock();
      const delivered = fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
      await requested;
      await vi.advanceTimersByTimeAsync(LIMIT_MS);
      await delivered;
      vi.useRealTimers();
      // The hanging request was abandoned (its connection closed), not left behind.
      await expect.poll(() => fx.model.events).toEqual(["request 0", "closed 0"]);

      const state = stateOf(planBody(plan.id));
      expect(state.status).toBe("failed");
      expect(state.steps.S1).toMatchObject({ status: "failed" });
      expect(state.steps.S1?.reason).toMatch(/time limit of 30 seconds while waiting for the model/);
      expect(visible(planBody(plan.id))).toMatch(/S1 failed: the run hit its time limit of 30 seconds/);
    });

    it("verification commands are capped at the time limit and a killed check is reported as failed", async () => {
      await fx.start(
        [write("src/retry.js", "x\n"), complete("S1"), write("README.md", "# Retries\n"), complete("S2")],
        {},
        limits,
      );
      // A check that would outlast the limit (an hour, against the 10 minutes verification otherwise allows).
      const check = sleeper();
      const plan = fx.seedPlan(twoSteps([check]));
      fakeClock();
      const delivered = fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
      // Both steps are built and the check runs, however long that took; then the limit passes.
      await untilRunning(check);
      await vi.advanceTimersByTimeAsync(LIMIT_MS);
      await delivered;
      expect(fx.github.pulls[0]?.draft).toBe(true);
      expect(visible(planBody(plan.id))).toContain(`Built, but verification failed:** \`${check}\` (timed out)`);
    });
  });
});
