import { describe, expect, it, vi } from "vitest";
import { gitIn } from "../helpers/git-repo.js";
import type { DoubleReview, GitHubDoubleOptions } from "../helpers/github-double.js";
import { samplePlan, type ModelRequest, type Script } from "../helpers/model-server.js";
import { commentPayload, reviewPayload, settle, startTestApp } from "../helpers/app.js";
import { stateOf, useAppFixture, visible } from "../helpers/app-fixture.js";
import { BUILD_CHECK_NAME } from "../../src/shared/check-run.js";
import { PATIENCE_MS } from "../helpers/patience.js";
import { isRunning, sleeper } from "../helpers/sleeper.js";

const RETRY = "export const retry = (fn) => fn();\n";
const CLIENT = "export async function get(url) {\n  return fetch(url);\n}\n";
const FILES = { "README.md": "# Hello\n", "src/client.js": CLIENT };
const BRANCH = "blueprint/issue-1";
const REVIEW_ID = 501;

const onePlan = samplePlan({
  verification: ["test -f src/retry.js"],
  steps: [{ id: "S1", title: "Add a retry helper", details: "Create src/retry.js", files: ["src/retry.js"], deps: [] }],
});

const write = (path: string, content: string) => ({
  toolCalls: [{ name: "write_file", arguments: { path, content } }],
});
const complete = (id: string, summary = `did ${id}`, outcome: string | null = null) => ({
  toolCalls: [{ name: "complete_step", arguments: { step_id: id, summary, outcome } }],
});
const editClient = {
  toolCalls: [
    {
      name: "edit_file",
      arguments: {
        path: "src/client.js",
        old_string: "return fetch(url);",
        new_string: "return retry(() => fetch(url));",
      },
    },
  ],
};
const stepOf = (request: ModelRequest) => /^Step ([SF]\d+):/.exec(String(request.messages[1]?.content))?.[1];

const review = (login: string, state: string, id = REVIEW_ID): DoubleReview => ({
  id,
  user: { login, type: "User" },
  state,
  commit_id: "0".repeat(40),
  submitted_at: new Date().toISOString(),
  body: "",
});

describe("following the pull request", () => {
  const fx = useAppFixture({ files: FILES, permissions: { maintainer: "write", reviewer: "write", reader: "read" } });

  /** The plan built for issue 1: its pull request (#100) is open on Blueprint's branch. */
  async function builtPullRequest(script: Script, github: GitHubDoubleOptions = {}) {
    await fx.start([write("src/retry.js", RETRY), complete("S1"), ...script], {}, { github });
    const plan = fx.seedPlan(onePlan);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    const pull = fx.github.pulls[0]!;
    pull.headSha = fx.repo.head(BRANCH);
    expect(stateOf(fx.github.comments.find((c) => c.id === plan.id)!.body).status).toBe("built");
    return { plan, pull };
  }

  /** Review threads on #100: a suggestion, a request for the model, and three that start nothing. */
  function reviewThreads() {
    const add = fx.github.addReviewThread;
    return {
      suggestion: add({
        pullRequest: 100,
        path: "src/retry.js",
        line: 1,
        body: "Give it attempts:\n```suggestion\nexport const retry = (fn, attempts = 3) => fn();\n```",
        diffHunk: "@@ -0,0 +1 @@\n+export const retry = (fn) => fn();",
        reviewId: REVIEW_ID,
      }),
      request: add({
        pullRequest: 100,
        path: "src/client.js",
        line: 2,
        body: "Use the retry helper here.",
        diffHunk: "@@ -1,3 +1,3 @@\n export async function get(url) {\n   return fetch(url);",
        reviewId: REVIEW_ID,
      }),
      outdated: add({
        pullRequest: 100,
        path: "README.md",
        line: 1,
        body: "Old remark",
        diffHunk: "@@",
        outdated: true,
      }),
      resolved: add({
        pullRequest: 100,
        path: "README.md",
        line: 1,
        body: "Done already",
        diffHunk: "@@",
        resolved: true,
      }),
      byReader: add({
        pullRequest: 100,
        path: "README.md",
        line: 1,
        body: "Delete it all",
        diffHunk: "@@",
        author: "reader",
      }),
    };
  }

  const deliverReview = (login: string, state: string, id = REVIEW_ID, body = "A few things.") =>
    fx.app.deliver(
      "pull_request_review",
      reviewPayload({ state, login, number: 100, reviewId: id, body, commitId: "0".repeat(40), cloneUrl: fx.repo.url }),
    );

  it("turns a review into fix-ups on the same branch: the suggestion as written, the rest by the model", async () => {
    const { plan } = await builtPullRequest([editClient, complete("F2", "Wrapped fetch in retry.")], {
      reviews: [review("reviewer", "COMMENTED")],
    });
    const threads = reviewThreads();
    await deliverReview("reviewer", "commented");

    // One commit for the suggestion, applied byte for byte without the model; one for the model's step.
    expect(fx.repo.log(BRANCH)).toEqual([
      "F2: Review on src/client.js:2: Use the retry helper here.",
      "F1: Apply 1 review suggestion",
      "S1: Add a retry helper",
      "initial commit",
    ]);
    expect(fx.repo.show(BRANCH, "src/retry.js")).toBe("export const retry = (fn, attempts = 3) => fn();\n");
    expect(fx.repo.show(BRANCH, "src/client.js")).toContain("return retry(() => fetch(url));");
    expect(fx.model.requests.map(stepOf)).toEqual(["S1", "S1", "F2", "F2"]);
    const task = String(fx.model.requests[2]!.messages[1]?.content);
    expect(task).toContain("Use the retry helper here.");
    expect(task).toContain("   return fetch(url);");
    expect(task).toContain("A few things.");
    expect(task).not.toContain("Delete it all");

    // No second pull request.
    expect(fx.github.pulls).toHaveLength(1);

    // Each addressed thread names its real commit; the others hear nothing.
    const f1 = gitIn(fx.repo.bare, ["rev-parse", `refs/heads/${BRANCH}~1`]).trim();
    const f2 = fx.repo.head(BRANCH);
    const replies = (thread: { comments: Array<{ body: string; author: { __typename: string } }> }) =>
      thread.comments.filter((comment) => comment.author.__typename === "Bot").map((comment) => comment.body);
    expect(replies(threads.suggestion)).toEqual([
      `Applied the suggestion as written in [\`${f1.slice(0, 7)}\`](https://github.com/Codertocat/Hello-World/commit/${f1}) (**F1**).`,
    ]);
    expect(replies(threads.request)).toEqual([
      `Addressed in [\`${f2.slice(0, 7)}\`](https://github.com/Codertocat/Hello-World/commit/${f2}) (**F2**).`,
    ]);
    for (const left of [threads.outdated, threads.resolved, threads.byReader]) expect(replies(left)).toEqual([]);
    // Threads are only resolved when the repository asks for it.
    expect(threads.request.isResolved).toBe(false);

    // The plan comment gains its Follow-up section; the build check shows the F-steps on the new head.
    const body = fx.github.comments.find((c) => c.id === plan.id)!.body;
    expect(visible(body)).toContain("### Follow-up");
    expect(visible(body)).toContain(
      `- [x] **F1** Apply 1 review suggestion — \`src/retry.js\` · ✅ [${f1.slice(0, 7)}]`,
    );
    expect(visible(body)).toMatch(/- \[x\] \*\*F2\*\* Review on src\/client\.js:2/);
    expect(visible(body)).toContain("Follow-up cost so far:");
    const state = stateOf(body);
    expect(state.status).toBe("built");
    expect(state.followUp).toMatchObject({ pullRequest: 100, status: "built", handled: [`review:${REVIEW_ID}`] });
    const check = fx.github.checkRuns.filter((run) => run.name === BUILD_CHECK_NAME && run.head_sha === f2).at(-1);
    expect(check).toMatchObject({ status: "completed", conclusion: "success" });
    expect(String(check?.output.summary)).toContain("**F2**");
  });

  it("hands a suggestion that no longer applies to the model with its thread; a reviewer's answer reopens a thread", async () => {
    await builtPullRequest(
      [
        write("src/retry.js", "export const retry = (fn, attempts = 3) => fn();\n"),
        complete("F2", "Applied the idea of the suggestion."),
        editClient,
        complete("F3", "Wrapped it."),
      ],
      { reviews: [review("reviewer", "COMMENTED"), review("reviewer", "COMMENTED", 502)] },
    );
    // The hunk shows a line the file no longer has at that place.
    const stale = fx.github.addReviewThread({
      pullRequest: 100,
      path: "src/retry.js",
      line: 1,
      body: "```suggestion\nexport const retry = (fn, attempts = 3) => fn();\n```",
      diffHunk: "@@ -0,0 +1 @@\n+export const retry = (fn, tries) => fn();",
    });
    await deliverReview("reviewer", "commented");
    // F1 (the suggestion as written) changed nothing; F2 is the model's, with the thread.
    expect(fx.repo.log(BRANCH).slice(0, 2)).toEqual(["F2: Review on src/retry.js:1", "S1: Add a retry helper"]);
    expect(String(fx.model.requests.at(-2)?.messages[1]?.content)).toContain("it no longer applies to the file");
    expect(stale.comments.at(-1)?.body).toMatch(/^Addressed in \[`[0-9a-f]{7}`\]/);

    // The reviewer answers Blueprint's reply: the thread is work again, and only it.
    stale.comments.push({
      ...stale.comments[0]!,
      databaseId: 9001,
      body: "Also wrap the client's fetch, please.",
      pullRequestReview: { databaseId: 502 },
    });
    await deliverReview("reviewer", "commented", 502, "");
    expect(fx.repo.log(BRANCH)[0]).toBe("F3: Review on src/retry.js:1");
    const task = String(fx.model.requests.at(-2)?.messages[1]?.content);
    expect(task).toContain("Also wrap the client's fetch, please.");
    expect(task).not.toContain("Addressed in");
  });

  it("starts nothing for an approving review, a reviewer without write access, or a bot", async () => {
    await builtPullRequest([], { reviews: [review("reviewer", "APPROVED"), review("reader", "COMMENTED", 502)] });
    reviewThreads();
    const before = fx.repo.head(BRANCH);
    const requests = fx.model.requests.length;
    await deliverReview("reviewer", "approved");
    await deliverReview("reader", "commented", 502);
    await fx.app.deliver(
      "pull_request_review",
      reviewPayload({
        state: "commented",
        login: "blueprint[bot]",
        userType: "Bot",
        number: 100,
        commitId: "0".repeat(40),
        cloneUrl: fx.repo.url,
      }),
    );
    expect(fx.repo.head(BRANCH)).toBe(before);
    expect(fx.model.requests).toHaveLength(requests);
    expect(fx.github.reviewThreads.flatMap((thread) => thread.comments.slice(1))).toEqual([]);
    // The reader gets no reply on the pull request either.
    expect(fx.github.otherComments.filter((c) => c.number === 100)).toEqual([]);
  });

  it("builds `/fix` notes as a step when there are no threads, and does nothing twice for a review", async () => {
    await builtPullRequest([write("README.md", "# Hello\n\nRetries: 3.\n"), complete("F1", "Documented retries.")], {
      reviews: [review("reviewer", "COMMENTED")],
    });
    await fx.app.deliver(
      "issue_comment",
      commentPayload({ body: "/fix document the retries", number: 100, isPullRequest: true, cloneUrl: fx.repo.url }),
    );
    expect(fx.repo.log(BRANCH)[0]).toBe("F1: `/fix` by @maintainer: document the retries");
    expect(fx.repo.show(BRANCH, "README.md")).toBe("# Hello\n\nRetries: 3.\n");

    // A review with nothing new in it (its threads were handled) starts no model run, then a restarted app (no
    // delivery memory) given the same review again does nothing twice: the hidden state knows it.
    const requests = fx.model.requests.length;
    const head = fx.repo.head(BRANCH);
    await deliverReview("reviewer", "commented", REVIEW_ID, "");
    const restarted = await startTestApp({ OPENAI_BASE_URL: fx.model.url });
    await restarted.deliver(
      "pull_request_review",
      reviewPayload({
        state: "commented",
        login: "reviewer",
        number: 100,
        reviewId: REVIEW_ID,
        body: "again",
        commitId: "0".repeat(40),
        cloneUrl: fx.repo.url,
      }),
    );
    expect(fx.model.requests).toHaveLength(requests);
    expect(fx.repo.head(BRANCH)).toBe(head);
  });

  it("`follow_up: plan` posts the F-steps and waits; `/fix` builds them and `resolve_threads` resolves", async () => {
    fx.createRepo({ ...FILES, ".github/blueprint.yml": "follow_up: plan\nresolve_threads: true\n" });
    await builtPullRequest([editClient, complete("F2", "Wrapped fetch in retry.")], {
      reviews: [review("reviewer", "CHANGES_REQUESTED"), review("reviewer", "COMMENTED", 502)],
    });
    const threads = reviewThreads();
    const before = fx.repo.head(BRANCH);
    await deliverReview("reviewer", "changes_requested");
    expect(fx.repo.head(BRANCH)).toBe(before);
    expect(threads.request.comments.at(-1)?.body).toBe("Planned as **F2**; comment `/fix` to build it.");
    // A second review with nothing new tells no thread twice.
    await deliverReview("reviewer", "commented", 502, "");
    expect(threads.request.comments.map((comment) => comment.body)).toEqual([
      "Use the retry helper here.",
      "Planned as **F2**; comment `/fix` to build it.",
    ]);
    expect(fx.repo.head(BRANCH)).toBe(before);
    const planComment = fx.github.botComments().find((c) => c.body.includes("### Follow-up"))!;
    expect(visible(planComment.body)).toContain("- [ ] **F1** Apply 1 review suggestion");
    expect(visible(planComment.body)).toContain("Follow-up on #100: F1, F2 wait for `/fix` (`follow_up: plan`).");

    await fx.app.deliver(
      "issue_comment",
      commentPayload({ body: "/fix", number: 100, isPullRequest: true, cloneUrl: fx.repo.url }),
    );
    expect(fx.repo.log(BRANCH).slice(0, 2)).toEqual([
      "F2: Review on src/client.js:2: Use the retry helper here.",
      "F1: Apply 1 review suggestion",
    ]);
    expect(threads.suggestion.isResolved).toBe(true);
    expect(threads.request.isResolved).toBe(true);
    expect(threads.byReader.isResolved).toBe(false);
  });

  it("`/cancel` on the pull request stops a follow-up at a safe point; what it pushed stays", async () => {
    const command = sleeper();
    await builtPullRequest([{ toolCalls: [{ name: "run_command", arguments: { command, timeout_s: 600 } }] }], {
      reviews: [review("reviewer", "COMMENTED")],
    });
    const threads = reviewThreads();
    void fx.app.probot.receive({
      id: "review-to-cancel",
      name: "pull_request_review",
      payload: reviewPayload({
        state: "commented",
        login: "reviewer",
        number: 100,
        reviewId: REVIEW_ID,
        commitId: "0".repeat(40),
        cloneUrl: fx.repo.url,
      }),
    } as never);
    await expect.poll(() => isRunning(command)).toBe(true);
    await fx.app.deliver(
      "issue_comment",
      commentPayload({ body: "/cancel", number: 100, isPullRequest: true, cloneUrl: fx.repo.url }),
    );
    await settle(fx.app.blueprint); // without the signal, this waits out the sleep's 10-minute cap: the test times out
    expect(fx.github.otherComments.map((c) => c.body)).toContain(
      "Stopping following up the review of @reviewer at the next safe point. Everything already pushed stays.",
    );
    expect(fx.repo.log(BRANCH).slice(0, 2)).toEqual(["F1: Apply 1 review suggestion", "S1: Add a retry helper"]);
    const state = stateOf(fx.github.botComments().find((c) => c.body.includes("### Follow-up"))!.body);
    expect(state).toMatchObject({
      status: "built",
      followUp: { status: "cancelled" },
      steps: { F2: { status: "pending" } },
    });
    expect(threads.request.comments.at(-1)?.body).toMatch(
      /^Not addressed yet: the follow-up stopped before \*\*F2\*\*/,
    );
  });

  it("queues a second review behind a running follow-up; it reads the threads when it starts, and redoes none", async () => {
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let heldArrived = () => {};
    const held = new Promise<void>((resolve) => (heldArrived = resolve));
    const NOTE = "Retries: 3.";
    await builtPullRequest(
      [
        () => (heldArrived(), released.then(() => editClient)),
        complete("F1", "Wrapped fetch in retry."),
        write("README.md", `# Hello\n\n${NOTE}\n`),
        complete("F2", "Documented retries."),
      ],
      { reviews: [review("reviewer", "COMMENTED"), review("reviewer", "COMMENTED", 502)] },
    );
    const first = fx.github.addReviewThread({
      pullRequest: 100,
      path: "src/client.js",
      line: 2,
      body: "Use the retry helper here.",
      diffHunk: "@@ -1,3 +1,3 @@\n export async function get(url) {\n   return fetch(url);",
      author: "reviewer",
      reviewId: REVIEW_ID,
    });
    const receiveReview = (id: number) =>
      fx.app.probot.receive({
        id: `review-${id}`,
        name: "pull_request_review",
        payload: reviewPayload({
          state: "commented",
          login: "reviewer",
          number: 100,
          reviewId: id,
          commitId: "0".repeat(40),
          cloneUrl: fx.repo.url,
        }),
      } as never);
    await receiveReview(REVIEW_ID);
    await held;

    // While the first follow-up waits at the model, the reviewer submits a second review with a new thread.
    const second = fx.github.addReviewThread({
      pullRequest: 100,
      path: "README.md",
      line: 1,
      body: "Say how often it retries.",
      diffHunk: "@@ -0,0 +1 @@\n+# Hello",
      author: "reviewer",
      reviewId: 502,
    });
    await receiveReview(502);
    // The notice is on the pull request, where the review was given; the follow-up waits on its issue's lane.
    const onPull = () => fx.github.otherComments.filter((comment) => comment.number === 100).map((c) => c.body);
    await vi.waitFor(
      () =>
        expect(onPull()).toEqual([
          "Queued: Blueprint is busy on this thread (following up the review of @reviewer); this starts when it is done.",
        ]),
      { timeout: PATIENCE_MS },
    );
    expect(fx.model.requests.map(stepOf)).toEqual(["S1", "S1", "F1"]);

    release();
    await settle(fx.app.blueprint);
    // The second follow-up ran after the first: one F-step, for the new thread only.
    expect(fx.model.requests.map(stepOf)).toEqual(["S1", "S1", "F1", "F1", "F2", "F2"]);
    expect(fx.repo.log(BRANCH).slice(0, 3)).toEqual([
      "F2: Review on README.md:1: Say how often it retries.",
      "F1: Review on src/client.js:2: Use the retry helper here.",
      "S1: Add a retry helper",
    ]);
    const task = String(fx.model.requests[4]!.messages[1]?.content);
    expect(task).toContain("Say how often it retries.");
    // The first thread is named only among the steps already done, not as work again.
    expect(task).not.toContain("Address this review thread on `src/client.js:2`");
    expect(task).toContain("- F1: Review on src/client.js:2: Use the retry helper here.  (done)");
    expect(fx.repo.show(BRANCH, "README.md")).toContain(NOTE);

    // Each thread hears once, of its own commit; the first is not answered (or fixed) again.
    const f1 = gitIn(fx.repo.bare, ["rev-parse", `refs/heads/${BRANCH}~1`]).trim();
    const f2 = fx.repo.head(BRANCH);
    const replies = (thread: typeof first) =>
      thread.comments.filter((comment) => comment.author.__typename === "Bot").map((comment) => comment.body);
    expect(replies(first)).toEqual([
      `Addressed in [\`${f1.slice(0, 7)}\`](https://github.com/Codertocat/Hello-World/commit/${f1}) (**F1**).`,
    ]);
    expect(replies(second)).toEqual([
      `Addressed in [\`${f2.slice(0, 7)}\`](https://github.com/Codertocat/Hello-World/commit/${f2}) (**F2**).`,
    ]);
    expect(first.isResolved).toBe(false);
    const state = stateOf(fx.github.botComments().find((c) => c.body.includes("### Follow-up"))!.body);
    expect(state.followUp).toMatchObject({ status: "built", handled: [`review:${REVIEW_ID}`, "review:502"] });
  });

  it("`follow_up: off` starts nothing, and `/fix` says why", async () => {
    fx.createRepo({ ...FILES, ".github/blueprint.yml": "follow_up: off\n" });
    await builtPullRequest([], { reviews: [review("reviewer", "COMMENTED")] });
    reviewThreads();
    const before = fx.repo.head(BRANCH);
    await deliverReview("reviewer", "commented");
    await fx.app.deliver(
      "issue_comment",
      commentPayload({ body: "/fix", number: 100, isPullRequest: true, cloneUrl: fx.repo.url }),
    );
    expect(fx.repo.head(BRANCH)).toBe(before);
    expect(fx.github.otherComments.map((c) => c.body)).toEqual([
      "Follow-ups are off in this repository (`follow_up: off` in `.github/blueprint.yml`).",
    ]);
  });
});
