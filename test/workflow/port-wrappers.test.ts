import { describe, expect, it } from "vitest";
import { createRedactor } from "../../src/agent/redact.js";
import { recordWrites } from "../../src/github/run-outcome.js";
import { deriveStateKey } from "../../src/github/state-marker.js";
import type { ThreadPort } from "../../src/workflow/ports.js";
import { safePort } from "../../src/workflow/safe-port.js";

// The port wrappers spread the port and override the methods they change: a method added to the port passes through
// them untouched, and only the wrapper that must change it (safe-port.ts, for text sent to GitHub) is edited.
const SECRET = "sk-test-0123456789abcdefghijklmnop";

/** A port whose every method records its call; `extra` stands for a method the wrappers do not know of. */
function recordingPort() {
  const calls: Array<[string, unknown[]]> = [];
  const method =
    (name: string, result: unknown = undefined) =>
    (...args: unknown[]) => {
      calls.push([name, args]);
      return Promise.resolve(result);
    };
  const checks = {
    find: method("checks.find", null),
    get: method("checks.get", null),
    create: method("checks.create", { id: 1 }),
    update: method("checks.update"),
    failures: method("checks.failures", []),
    isOwnApp: () => true,
    buttons: true,
  };
  const reviews = {
    pullRequest: method("reviews.pullRequest", null),
    review: method("reviews.review", null),
    threads: method("reviews.threads", []),
    reply: method("reviews.reply", { id: 3, url: "u" }),
    resolve: method("reviews.resolve"),
    comment: method("reviews.comment", { id: 4, url: "u" }),
  };
  const names = ["info", "comments", "reactToComment", "permission", "teamMember", "account", "gitToken", "commitUrl"];
  const more = ["canWriteWorkflows", "reviewComments", "comment", "review", "minimizeComment", "threadLabels"];
  const rest = ["repositoryLabels", "createLabel", "addThreadLabel", "removeThreadLabel", "deletesMergedBranches"];
  const port = {
    repo: { owner: "octo", name: "repo", htmlUrl: "https://github.com/octo/repo" },
    number: 7,
    ...Object.fromEntries([...names, ...more, ...rest, "extra"].map((name) => [name, method(name)])),
    postComment: method("postComment", { id: 9, url: "u" }),
    updateComment: method("updateComment"),
    upsertPullRequest: method("upsertPullRequest", { number: 8, url: "u" }),
    checks,
    reviews,
  } as unknown as ThreadPort & { extra: (value: string) => Promise<void> };
  return { port, calls };
}

describe("the port wrappers", () => {
  const redact = createRedactor([SECRET]);
  const key = deriveStateKey("a-test-secret");

  it("keep every member of the port, the ones they do not know of included", async () => {
    const { port, calls } = recordingPort();
    for (const wrapped of [safePort(port, redact, key), recordWrites(port).port]) {
      expect(Object.keys(wrapped).sort()).toEqual(Object.keys(port).sort());
      await (wrapped as typeof port).extra("passed through");
      await wrapped.permission("octocat");
      expect(wrapped.repo).toBe(port.repo);
      expect(wrapped.number).toBe(7);
    }
    expect(calls.filter(([name]) => name === "extra" || name === "permission")).toEqual([
      ["extra", ["passed through"]],
      ["permission", ["octocat"]],
      ["extra", ["passed through"]],
      ["permission", ["octocat"]],
    ]);
  });

  it("redact what goes to GitHub: comments, the pull request, check runs and review replies (safe-port)", async () => {
    const { port, calls } = recordingPort();
    const safe = safePort(port, redact, key);
    await safe.postComment(`a comment with ${SECRET}`);
    await safe.upsertPullRequest({ head: "b", base: "main", title: `t ${SECRET}`, body: `b ${SECRET}`, draft: false });
    await safe.checks?.create({ headSha: "a".repeat(40), name: "n", title: `t ${SECRET}`, summary: SECRET } as never);
    await safe.reviews?.reply(8, 5, `a reply with ${SECRET}`);
    await safe.reviews?.comment(8, `a comment with ${SECRET}`);
    await safe.reviews?.threads(8);
    expect(calls.map(([name]) => name)).toEqual([
      "postComment",
      "upsertPullRequest",
      "checks.create",
      "reviews.reply",
      "reviews.comment",
      "reviews.threads",
    ]);
    expect(JSON.stringify(calls)).not.toContain(SECRET);
    expect(safe.checks?.buttons).toBe(true);
    expect(safe.checks?.isOwnApp({ id: 1 } as never)).toBe(true);
  });

  it("record the comments a run wrote, and which were replies (recordWrites)", async () => {
    const { port } = recordingPort();
    const { port: recorded, writes } = recordWrites(port);
    await recorded.postComment("a reply");
    expect([...writes.touched]).toEqual([9]);
    expect(writes.replies).toEqual(["a reply"]);
  });
});
