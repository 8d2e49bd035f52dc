import { describe, expect, it } from "vitest";
import {
  checkActionJob,
  checkSuiteJob,
  closedJob,
  commandJob,
  commentJob,
  deliveryJob,
  deliveryRemoval,
  reviewJob,
  synchronizeJob,
} from "../../src/jobs/from-webhook.js";
import { jobSchema, removalCovers, threadOf } from "../../src/jobs/job.js";
import {
  checkActionPayload,
  checkSuitePayload,
  closedPullPayload,
  commentPayload,
  webhookExample,
} from "../helpers/app.js";

const comment = (body: string, userType = "User") =>
  commentPayload({
    body,
    cloneUrl: "https://github.com/Codertocat/Hello-World.git",
    commentId: 7,
    number: 3,
    userType,
  });

describe("a webhook becomes a job: plain data, no I/O", () => {
  it("turns each command into its kind with its arguments, claimed by delivery and comment id", () => {
    const build = commentJob("d-1", comment("/build S2 --fresh"), 1000);
    expect(build?.keys).toEqual(["delivery:d-1", "comment:7"]);
    expect(build?.job).toMatchObject({
      kind: "build",
      deliveryId: "d-1",
      installationId: 42,
      number: 3,
      actor: "maintainer",
      commentId: 7,
      steps: ["S2"],
      fresh: true,
      force: false,
      receivedAt: 1000,
    });
    expect(build?.job.repository).toEqual({
      owner: "Codertocat",
      name: "Hello-World",
      cloneUrl: "https://github.com/Codertocat/Hello-World.git",
      defaultBranch: "main",
      htmlUrl: "https://github.com/Codertocat/Hello-World",
    });
    expect(commentJob("d", comment("/plan add retries\nand tests"))?.job).toMatchObject({
      kind: "plan",
      instructions: "add retries\nand tests",
    });
    expect(commentJob("d", comment("/revise smaller steps"))?.job).toMatchObject({
      kind: "revise",
      feedback: "smaller steps",
    });
    expect(commentJob("d", comment("/cancel"))?.job.kind).toBe("cancel");
    expect(commentJob("d", comment("/status"))?.job.kind).toBe("status");
    expect(commentJob("d", comment("/plna"))?.job).toMatchObject({
      kind: "reply",
      silentIfRefused: true,
      text: expect.stringContaining("/plan"),
    });
    expect(commentJob("d", comment("looks good, but use fetch"))?.job).toMatchObject({
      kind: "respond",
      body: "looks good, but use fetch",
    });
  });

  it("maps a comment's text without a webhook the same way (the CLI's subcommands come through here)", () => {
    const repository = {
      owner: "local",
      name: "checkout",
      cloneUrl: "file:///tmp/checkout",
      defaultBranch: "main",
      htmlUrl: "file:///tmp/checkout",
    };
    const base = {
      deliveryId: "cli-1-3",
      installationId: 1,
      repository,
      number: 2,
      actor: "me",
      receivedAt: 5,
      commentId: 3,
    };
    expect(commandJob(base, "/build --fresh S2 keep the API", "2026-01-01T00:00:00Z")).toEqual({
      kind: "build",
      ...base,
      revision: null,
      steps: ["S2"],
      force: false,
      fresh: true,
      notes: "keep the API",
      commandCreatedAt: "2026-01-01T00:00:00Z",
    });
    expect(commandJob(base, "/build --frsh")).toMatchObject({
      kind: "reply",
      silentIfRefused: false,
      text: expect.stringContaining("`--frsh`"),
    });
    expect(commandJob(base, "use the v2 endpoint")).toEqual({ kind: "respond", ...base, body: "use the v2 endpoint" });
    expect(commandJob(base, "\n  \n")).toBeNull();
    expect(jobSchema.parse(commandJob(base, "/plan add retries"))).toMatchObject({
      kind: "plan",
      instructions: "add retries",
    });
  });

  it("drops what is not for Blueprint: bots (Blueprint included) and blank comments", () => {
    expect(commentJob("d", comment("/plan", "Bot"))).toBeNull();
    expect(commentJob("d", comment("   "))).toBeNull();
  });

  it("an approving review is a build, request-changes is feedback, a comment-only review may follow up", () => {
    const review = (state: string) => {
      const payload = webhookExample("pull_request_review", (e) => e.action === "submitted");
      payload.review.state = state;
      payload.installation = { id: 42 };
      return payload as Parameters<typeof reviewJob>[1];
    };
    expect(reviewJob("d", review("approved"))?.job.kind).toBe("review-approval");
    expect(reviewJob("d", review("changes_requested"))?.job.kind).toBe("review-changes");
    expect(reviewJob("d", review("commented"))?.job).toMatchObject({
      kind: "follow-up",
      reviewState: "commented",
      commentId: null,
      pullRequest: review("commented").pull_request.number,
    });
    expect(reviewJob("d", review("dismissed"))).toBeNull();
  });

  it("what crosses a process boundary is validated: a job survives JSON, a forged one does not", () => {
    const accepted = commentJob("d-2", comment("/plan"));
    expect(accepted).not.toBeNull();
    const wire = JSON.parse(JSON.stringify(accepted?.job)) as unknown;
    expect(jobSchema.parse(wire)).toEqual(accepted?.job);
    expect(() => jobSchema.parse({ ...(wire as object), kind: "shell" })).toThrow();
    expect(() => jobSchema.parse({ ...(wire as object), installationId: "42" })).toThrow();
    expect(threadOf(jobSchema.parse(wire))).toBe("Codertocat/Hello-World#3");
  });

  it("a push to a pull request is a staleness check, claimed by its delivery only", () => {
    const payload = webhookExample("pull_request", (e) => e.action === "synchronize");
    payload.installation = { id: 42 };
    const accepted = synchronizeJob("d-3", payload as Parameters<typeof synchronizeJob>[1]);
    expect(accepted?.keys).toEqual(["delivery:d-3"]);
    expect(accepted?.job).toMatchObject({ kind: "stale", headSha: payload.pull_request.head.sha });
  });

  it("Blueprint's pull request merged or closed is a job on the issue its branch is named for, claimed by its delivery only", () => {
    const payload = (edit: Partial<Parameters<typeof closedPullPayload>[0]> = {}) =>
      closedPullPayload({
        number: 12,
        headRef: "bots/issue-7",
        headSha: "abc123",
        merged: true,
        cloneUrl: "https://github.com/Codertocat/Hello-World.git",
        ...edit,
      }) as Parameters<typeof closedJob>[1];
    const accepted = deliveryJob({ id: "d-4", name: "pull_request", payload: payload() });
    expect(accepted?.keys).toEqual(["delivery:d-4"]);
    expect(accepted?.job).toMatchObject({
      kind: "pull-closed",
      number: 7,
      pullRequest: 12,
      merged: true,
      headRef: "bots/issue-7",
      headSha: "abc123",
      actor: "maintainer",
    });
    expect(threadOf(jobSchema.parse(JSON.parse(JSON.stringify(accepted?.job))))).toBe("Codertocat/Hello-World#7");
    expect(closedJob("d", payload({ merged: false }))?.job).toMatchObject({ kind: "pull-closed", merged: false });
    expect(closedJob("d", payload({ headRef: "bp-issue-12" }))?.job.number).toBe(12);
    // Not Blueprint's: opened by a person, from a branch not named for an issue, or from a fork.
    expect(closedJob("d", payload({ author: { login: "octocat", type: "User" } }))).toBeNull();
    expect(closedJob("d", payload({ headRef: "feature/retries" }))).toBeNull();
    expect(closedJob("d", payload({ headRef: "blueprint/issue-0" }))).toBeNull();
    const fork = payload();
    fork.pull_request.head.repo = { full_name: "someone/Hello-World" };
    expect(closedJob("d", fork)).toBeNull();
  });

  it("a failed check suite on a pull request's head is a job on the plan's thread; any other suite is nothing", () => {
    const suite = (options: { headBranch?: string; conclusion?: string } = {}) =>
      checkSuitePayload({
        headSha: "a".repeat(40),
        headBranch: "blueprint/issue-12",
        pullRequest: 40,
        cloneUrl: "x",
        ...options,
      }) as Parameters<typeof checkSuiteJob>[1];
    const failed = suite();
    expect(checkSuiteJob("d", failed)).toMatchObject({
      job: {
        kind: "check-failure",
        number: 12,
        pullRequest: 40,
        headSha: "a".repeat(40),
        app: { slug: "github-actions" },
      },
      keys: ["delivery:d", `check-suite:${failed.check_suite.id}`],
    });
    expect(checkSuiteJob("d", suite({ headBranch: "feature" }))?.job.number).toBe(40);
    expect(checkSuiteJob("d", suite({ conclusion: "success" }))).toBeNull();
    const old = suite();
    old.check_suite.pull_requests[0]!.head.sha = "b".repeat(40);
    expect(checkSuiteJob("d", old)).toBeNull();
    expect(deliveryJob({ id: "d", name: "check_suite", payload: failed })?.job.kind).toBe("check-failure");
  });

  it("an uninstall or removed repositories become a removal, not a job: whole installation or the named repositories, covering jobs received before it", () => {
    const deleted = webhookExample("installation", (e) => e.action === "deleted");
    expect(deliveryRemoval({ id: "d-4", name: "installation", payload: deleted }, 2000)).toEqual({
      deliveryId: "d-4",
      installationId: deleted.installation.id,
      repositories: null,
      receivedAt: 2000,
    });
    const removed = webhookExample("installation_repositories", (e) => e.action === "removed");
    const removal = deliveryRemoval({ id: "d-5", name: "installation_repositories", payload: removed }, 2000);
    const [owner, name] = String(removed.repositories_removed[0].full_name).split("/");
    expect(removal).toEqual({
      deliveryId: "d-5",
      installationId: removed.installation.id,
      repositories: [{ owner, name }],
      receivedAt: 2000,
    });

    const job = {
      installationId: removed.installation.id,
      repository: { owner: String(owner).toUpperCase(), name: String(name) },
      receivedAt: 1999,
    };
    expect(removal && removalCovers(removal, job)).toBe(true);
    // A job received after the removal (the repository added back) runs; another repository's or installation's too.
    expect(removal && removalCovers(removal, { ...job, receivedAt: 2001 })).toBe(false);
    expect(removal && removalCovers(removal, { ...job, repository: { owner: String(owner), name: "other" } })).toBe(
      false,
    );
    expect(removal && removalCovers(removal, { ...job, installationId: job.installationId + 1 })).toBe(false);

    expect(
      deliveryRemoval({
        id: "d-6",
        name: "installation",
        payload: webhookExample("installation", (e) => e.action === "created"),
      }),
    ).toBeNull();
    expect(
      deliveryRemoval({
        id: "d-7",
        name: "installation_repositories",
        payload: { ...removed, repositories_removed: [] },
      }),
    ).toBeNull();
    expect(deliveryRemoval({ id: "d-8", name: "issue_comment", payload: comment("/plan") })).toBeNull();
  });

  it("a click on a Blueprint plan check's button is /build or /revise by the clicker, bound to the check's revision and commit", () => {
    const click = (edit: { identifier?: string; userType?: string; name?: string; externalId?: string | null } = {}) =>
      checkActionPayload({
        identifier: edit.identifier ?? "build",
        login: "maintainer",
        userType: edit.userType,
        cloneUrl: "https://github.com/Codertocat/Hello-World.git",
        check: {
          id: 77,
          name: edit.name ?? "Blueprint plan",
          externalId: edit.externalId === undefined ? "blueprint-plan:#3:v2" : edit.externalId,
          headSha: "abc123",
          app: { id: 1, slug: "blueprint" },
        },
      }) as Parameters<typeof checkActionJob>[1];
    const accepted = deliveryJob({ id: "d-4", name: "check_run", payload: click() });
    expect(accepted?.keys).toEqual(["delivery:d-4"]);
    expect(accepted?.job).toMatchObject({
      kind: "check-action",
      action: "build",
      number: 3,
      revision: 2,
      headSha: "abc123",
      checkRunId: 77,
      actor: "maintainer",
      app: { id: 1, slug: "blueprint" },
    });
    expect(jobSchema.parse(JSON.parse(JSON.stringify(accepted?.job)))).toEqual(accepted?.job);
    // A check made since plan hashes were recorded binds the click to the plan it shows too.
    const hashed = checkActionJob("d", click({ externalId: "blueprint-plan:#3:v2:0123456789abcdef" }))?.job;
    expect(hashed).toMatchObject({ kind: "check-action", revision: 2, planHash: "0123456789abcdef" });
    expect(accepted?.job).not.toHaveProperty("planHash");
    expect(checkActionJob("d", click({ identifier: "revise" }))?.job).toMatchObject({
      kind: "check-action",
      action: "revise",
    });
    // Not for us: a bot's click, another check, a check without our binding, a button we never made.
    expect(checkActionJob("d", click({ userType: "Bot" }))).toBeNull();
    expect(checkActionJob("d", click({ name: "CI" }))).toBeNull();
    expect(checkActionJob("d", click({ externalId: "" }))).toBeNull();
    expect(checkActionJob("d", click({ externalId: "blueprint-build:#3:v2" }))).toBeNull();
    expect(checkActionJob("d", click({ identifier: "lgtm|26764" }))).toBeNull();
  });
});
