import { chmodSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { gitIn } from "../helpers/git-repo.js";
import { samplePlan, type Script } from "../helpers/model-server.js";
import { closedPullPayload, commentPayload } from "../helpers/app.js";
import { stateOf, useAppFixture, visible } from "../helpers/app-fixture.js";
import type { GitHubDoubleOptions } from "../helpers/github-double.js";

const FILES = { "README.md": "# Hello\n" };
const BRANCH = "blueprint/issue-1";
const oneStep = samplePlan({
  verification: ["test -f src/retry.js"],
  steps: [{ id: "S1", title: "Add a retry helper", details: "Create src/retry.js", files: ["src/retry.js"], deps: [] }],
});
const build: Script = [
  {
    toolCalls: [
      { name: "write_file", arguments: { path: "src/retry.js", content: "export const retry = (fn) => fn();\n" } },
    ],
  },
  { toolCalls: [{ name: "complete_step", arguments: { step_id: "S1", summary: "Added it." } }] },
];

describe("Blueprint's pull request merged or closed", () => {
  const fx = useAppFixture({ files: FILES });
  const branchExists = () => gitIn(fx.repo.bare, ["branch", "--list", BRANCH]).trim() !== "";
  /**
   * A pre-receive hook on the remote that runs `action` (shell) when a push deletes Blueprint's branch: after
   * Blueprint looked at the branch and after git checked its lease, before the remote updates the ref.
   */
  const onBranchDelete = (action: string) => {
    const hook = path.join(fx.repo.bare, "hooks", "pre-receive");
    const zero = "0".repeat(40);
    writeFileSync(
      hook,
      `#!/bin/sh\nwhile read old new ref; do\n  if [ "$ref" = refs/heads/${BRANCH} ] && [ "$new" = ${zero} ]; then ${action}; fi\ndone\nexit 0\n`,
    );
    chmodSync(hook, 0o755);
  };
  const planBody = () => fx.github.botComments()[0]!.body;

  /** A plan built to its pull request, through the App: the state that a merge or close follows up on. */
  async function builtPlan(
    script: Script = [],
    github: GitHubDoubleOptions = {},
  ): Promise<{ pull: number; head: string }> {
    await fx.start([...build, ...script], {}, { github });
    fx.seedPlan(oneStep);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    const pull = fx.github.pulls[0];
    expect(pull, "the build opened no pull request").toBeDefined();
    expect(stateOf(planBody())).toMatchObject({ status: "built", pullRequest: pull?.number });
    return { pull: pull?.number ?? 0, head: fx.repo.head(BRANCH) };
  }

  const closed = (
    pull: number,
    head: string,
    merged: boolean,
    extra: Partial<Parameters<typeof closedPullPayload>[0]> = {},
  ) =>
    fx.app.deliver(
      "pull_request",
      closedPullPayload({ number: pull, headRef: BRANCH, headSha: head, merged, cloneUrl: fx.repo.url, ...extra }),
    );

  it("merged: deletes Blueprint's branch and says 'merged in #N' in the plan comment, whose report stays", async () => {
    const { pull, head } = await builtPlan();
    const before = planBody();
    expect(before).toContain("Audit log");
    await closed(pull, head, true);

    expect(branchExists()).toBe(false);
    const body = planBody();
    expect(body).toContain(`merged in #${pull}** by @maintainer. Its branch \`${BRANCH}\` is deleted.`);
    // Only the status line changed: the plan and the build report are as the build left them.
    expect(visible(body).replace(/^> .*$/m, "")).toBe(visible(before).replace(/^> .*$/m, ""));
    expect(visible(before)).toMatch(/^> 🎉 \*\*Built\*\* — pull request/m);
    expect(stateOf(body).status).toBe("built");
    expect(fx.github.threadLabels).toEqual(["blueprint: built"]);
  });

  it("merged where the repository deletes merged branches itself: Blueprint deletes nothing", async () => {
    const { pull, head } = await builtPlan([], { deleteBranchOnMerge: true });
    await closed(pull, head, true);
    expect(branchExists()).toBe(true);
    expect(planBody()).toContain(
      `merged in #${pull}** by @maintainer. The repository deletes merged branches, so GitHub removes \`${BRANCH}\`.`,
    );
  });

  it("merged with commits by someone else on the branch: the branch is kept, and the comment says why", async () => {
    const { pull } = await builtPlan();
    // A maintainer pushed a fix to Blueprint's branch before merging.
    const head = fx.repo.commit(
      { "src/retry.js": "export const retry = (fn) => fn(); // reviewed\n" },
      "Tweak the helper",
      BRANCH,
    );
    await closed(pull, head, true);
    expect(branchExists()).toBe(true);
    expect(planBody()).toContain(
      `The branch \`${BRANCH}\` is kept: it carries commits by others than Blueprint (Test Author).`,
    );
  });

  it("merged, but the remote refuses to delete the branch: the plan comment gives its reason", async () => {
    const { pull, head } = await builtPlan();
    onBranchDelete(`echo "branch ${BRANCH} is protected" >&2; exit 1`);
    await closed(pull, head, true);
    expect(branchExists()).toBe(true);
    expect(planBody()).toContain(
      `merged in #${pull}** by @maintainer. The branch \`${BRANCH}\` could not be deleted: [remote rejected] (pre-receive hook declined) branch ${BRANCH} is protected`,
    );
    expect(stateOf(planBody()).status).toBe("built");
  });

  it("merged, and a commit lands on the branch while the delete push reaches the remote: the remote refuses it and the commit survives", async () => {
    const { pull, head } = await builtPlan();
    const late = fx.repo.commit({ "late.txt": "pushed while Blueprint was deleting\n" }, "Late commit", "late");
    // The branch moves only once the delete push has reached the remote (past Blueprint's check and git's own lease
    // check).
    onBranchDelete(`env -u GIT_QUARANTINE_PATH git update-ref refs/heads/${BRANCH} ${late}`);
    await closed(pull, head, true);
    expect(fx.repo.head(BRANCH)).toBe(late);
    expect(planBody()).toContain(
      `merged in #${pull}** by @maintainer. The branch \`${BRANCH}\` is kept: it has moved since the merge (to \`${late.slice(0, 7)}\`).`,
    );
  });

  it("merged, and a commit lands on the branch after the mirror's fetch, before the delete: the lease keeps it", async () => {
    let late: string | null = null;
    let armed = false;
    // Blueprint reads the repository's settings after it looked at the branch in its mirror, and before it deletes the
    // branch.
    const push = () => void (late = fx.repo.commit({ "late.txt": "a maintainer's push\n" }, "Late commit", BRANCH));
    const { pull, head } = await builtPlan([], { onRepositoryRead: () => armed && late === null && push() });
    armed = true;
    await closed(pull, head, true);
    expect(late).not.toBeNull();
    expect(fx.repo.head(BRANCH)).toBe(late);
    expect(planBody()).toContain(
      `The branch \`${BRANCH}\` is kept: it has moved since the merge (to \`${(late ?? "").slice(0, 7)}\`).`,
    );
  });

  it("merged where the repository's setting cannot be read (no field for this token), and GitHub deleted the branch already", async () => {
    const { pull, head } = await builtPlan();
    onBranchDelete(`env -u GIT_QUARANTINE_PATH git update-ref -d refs/heads/${BRANCH}`);
    await closed(pull, head, true);
    expect(branchExists()).toBe(false);
    expect(planBody()).toContain(`merged in #${pull}** by @maintainer. The branch \`${BRANCH}\` is deleted already.`);
  });

  it("merged at another head than the branch now has: the branch is kept", async () => {
    const { pull, head } = await builtPlan();
    fx.repo.commit({ "late.txt": "pushed after the merge\n" }, "Late commit", BRANCH);
    await closed(pull, head, true);
    expect(branchExists()).toBe(true);
    expect(planBody()).toContain("is kept: it has moved since the merge");
  });

  it("closed unmerged: the plan comment says so, the branch stays, and a later /build resumes with a new pull request", async () => {
    const { pull, head } = await builtPlan();
    const modelRequests = fx.model.requests.length;
    await closed(pull, head, false);

    expect(branchExists()).toBe(true);
    expect(planBody()).toContain(`Pull request #${pull} was closed without merging** by @maintainer.`);
    expect(stateOf(planBody())).toMatchObject({
      status: "cancelled",
      error: `pull request #${pull} was closed without merging`,
    });
    expect(fx.github.threadLabels).toEqual(["blueprint: planned"]);
    fx.github.pulls[0]!.state = "closed";

    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    // S1 was done and pushed: nothing was built again, the branch is as it was, and a new pull request is open.
    expect(fx.model.requests.length).toBe(modelRequests);
    expect(fx.repo.head(BRANCH)).toBe(head);
    expect(fx.github.pulls.map((p) => [p.number, p.state])).toEqual([
      [pull, "closed"],
      [pull + 1, "open"],
    ]);
    expect(stateOf(planBody())).toMatchObject({ status: "built", pullRequest: pull + 1 });
    expect(fx.github.threadLabels).toEqual(["blueprint: built"]);
  });

  it("closed unmerged, then reopened and merged: the plan is built after all and the branch goes", async () => {
    const { pull, head } = await builtPlan();
    await closed(pull, head, false);
    expect(stateOf(planBody()).status).toBe("cancelled");
    await closed(pull, head, true);
    expect(stateOf(planBody())).toMatchObject({ status: "built", error: null });
    expect(planBody()).toContain(
      `🎉 **Built, merged in #${pull}** by @maintainer. Its branch \`${BRANCH}\` is deleted.`,
    );
    expect(branchExists()).toBe(false);
  });

  it("merged after a build of some steps only: the plan is not called built, and the branch stays for the rest", async () => {
    const twoSteps = samplePlan({
      verification: [],
      steps: [...oneStep.steps, { id: "S2", title: "Document it", details: "README", files: ["README.md"], deps: [] }],
    });
    await fx.start(build);
    fx.seedPlan(twoSteps);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build S1", cloneUrl: fx.repo.url }));
    const pull = fx.github.pulls[0]!.number;
    expect(stateOf(planBody())).toMatchObject({ status: "pending", pullRequest: pull });
    await closed(pull, fx.repo.head(BRANCH), true);
    expect(planBody()).toContain(
      `Steps built so far merged in #${pull}** by @maintainer. The branch \`${BRANCH}\` is kept: S2 is not built yet, and \`/build\` builds on it.`,
    );
    expect(branchExists()).toBe(true);
    expect(stateOf(planBody()).status).toBe("pending");
  });

  it("merged after /cancel stopped the rest of the build: the plan stays cancelled, says what is not built, and /build builds it", async () => {
    const twoSteps = samplePlan({
      verification: [],
      steps: [...oneStep.steps, { id: "S2", title: "Document it", details: "README", files: ["README.md"], deps: [] }],
    });
    let askedForS2: () => void = () => undefined;
    const s2Asked = new Promise<void>((resolve) => (askedForS2 = resolve));
    let cancelDelivered: () => void = () => undefined;
    const cancelled = new Promise<void>((resolve) => (cancelDelivered = resolve));
    const writeReadme = {
      toolCalls: [{ name: "write_file", arguments: { path: "README.md", content: "# Hello\n\nUse retry.\n" } }],
    };
    await fx.start([
      ...build,
      // The second /build's first request for S2 is answered only once /cancel has been delivered.
      () => {
        askedForS2();
        return cancelled.then(() => writeReadme);
      },
      writeReadme,
      { toolCalls: [{ name: "complete_step", arguments: { step_id: "S2", summary: "Documented it." } }] },
    ]);
    fx.seedPlan(twoSteps);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build S1", cloneUrl: fx.repo.url }));
    const pull = fx.github.pulls[0]!.number;

    await fx.app.probot.receive({
      id: "build-rest",
      name: "issue_comment",
      payload: commentPayload({ body: "/build", cloneUrl: fx.repo.url }),
    } as never);
    await s2Asked;
    await fx.app.deliver("issue_comment", commentPayload({ body: "/cancel", cloneUrl: fx.repo.url }));
    cancelDelivered();
    await fx.app.blueprint.idle();
    expect(stateOf(planBody())).toMatchObject({
      status: "cancelled",
      pullRequest: pull,
      steps: { S1: { status: "done" }, S2: { status: "pending" } },
    });

    await closed(pull, fx.repo.head(BRANCH), true);
    expect(planBody()).toContain(
      `Steps built so far merged in #${pull}** by @maintainer. The branch \`${BRANCH}\` is kept: S2 is not built yet, and \`/build\` builds on it.`,
    );
    expect(stateOf(planBody()).status).toBe("cancelled");
    expect(branchExists()).toBe(true);

    fx.github.pulls[0]!.state = "closed";
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    expect(stateOf(planBody())).toMatchObject({
      status: "built",
      pullRequest: pull + 1,
      steps: { S1: { status: "done" }, S2: { status: "done" } },
    });
    expect(fx.repo.show(BRANCH, "README.md")).toBe("# Hello\n\nUse retry.\n");
  });

  it("ignores pull requests that are not this plan's build", async () => {
    const { pull, head } = await builtPlan();
    const before = planBody();
    // Another pull request from the same branch name (the state names #pull), and one a person opened.
    await closed(pull + 7, head, true);
    await closed(pull, head, true, { author: { login: "octocat", type: "User" } });
    expect(planBody()).toBe(before);
    expect(branchExists()).toBe(true);
  });
});
