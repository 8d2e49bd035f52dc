import { describe, expect, it } from "vitest";
import { gitIn } from "../helpers/git-repo.js";
import { samplePlan, type ModelRequest } from "../helpers/model-server.js";
import { commentPayload, reviewPayload } from "../helpers/app.js";
import { useAppFixture } from "../helpers/app-fixture.js";

const FILES = { "README.md": "# Hello\n", "src/client.js": "export const get = (url) => fetch(url);\n" };
const write = (path: string, content: string) => ({
  toolCalls: [{ name: "write_file", arguments: { path, content } }],
});
const complete = (id: string) => ({
  toolCalls: [{ name: "complete_step", arguments: { step_id: id, summary: `did ${id}` } }],
});
/** The first user message of each step's conversation, by step id. */
function stepMessages(requests: ModelRequest[]): Map<string, string> {
  const messages = new Map<string, string>();
  for (const request of requests) {
    const first = String(request.messages[1]?.content ?? "");
    const id = /^Step (S\d+):/.exec(first)?.[1];
    if (id && !messages.has(id)) messages.set(id, first);
  }
  return messages;
}

describe("approving with notes", () => {
  const fx = useAppFixture({ files: FILES, permissions: { maintainer: "write" } });

  it("/build S2 keep the public API stable: every step built gets the note as the approver's instructions; the report and the hidden state keep it", async () => {
    await fx.start([write("src/retry.js", "x\n"), complete("S1"), write("src/client.js", "y\n"), complete("S2")]);
    const plan = fx.seedPlan(samplePlan({ verification: [] }));
    await fx.app.deliver(
      "issue_comment",
      commentPayload({ body: "/build S2 keep the public API stable", cloneUrl: fx.repo.url }),
    );

    expect(fx.repo.log("blueprint/issue-1")).toEqual([
      "S2: Use the helper in the client",
      "S1: Add a retry helper",
      "initial commit",
    ]);
    const messages = stepMessages(fx.model.requests);
    for (const id of ["S1", "S2"]) {
      const message = messages.get(id) ?? "";
      expect(message).toContain("# The approvers' instructions for this build");
      // Trusted text from an allowed user: a maintainer's words, not fenced as untrusted data.
      expect(message).toContain("### With /build (by @maintainer, a maintainer)\nkeep the public API stable");
      expect(message).not.toContain("<untrusted_input");
    }
    const body = fx.github.comments.find((c) => c.id === plan.id)?.body ?? "";
    expect(fx.visible(body)).toContain(
      "> **Notes from @maintainer** (with the `/build`), given to every step:\n> keep the public API stable",
    );
    expect(fx.github.pulls[0]?.body).toContain("keep the public API stable");
    expect(fx.stateOf(body).buildNotes).toEqual([
      { author: "maintainer", source: "build", text: "keep the public API stable" },
    ]);
  });

  it("an approving review's body is the note: given to the steps, shown in the report, recorded", async () => {
    const headSha = fx.repo.commit({ "src/feature.js": "f\n" }, "feature work", "feature");
    gitIn(fx.repo.bare, ["update-ref", "refs/pull/1/head", headSha]);
    await fx.start(
      [write("src/retry.js", "x\n"), complete("S1")],
      {},
      { github: { pullRequest: { headRef: "feature", headSha, baseRef: "main" } } },
    );
    const plan = fx.seedPlan(
      samplePlan({
        verification: [],
        steps: [{ id: "S1", title: "Only step", details: "", files: ["src/retry.js"], deps: [] }],
      }),
      {
        head: { ref: "feature", sha: headSha, sameRepo: true },
      },
    );
    const review = "Approved. Keep the error messages unchanged,\nthey are matched by clients.";
    await fx.app.deliver(
      "pull_request_review",
      reviewPayload({ state: "approved", commitId: headSha, login: "maintainer", cloneUrl: fx.repo.url, body: review }),
    );

    expect(fx.repo.log("feature")).toEqual(["S1: Only step", "feature work", "initial commit"]);
    expect(stepMessages(fx.model.requests).get("S1")).toContain(
      `### Approving review (by @maintainer, a maintainer)\n${review}`,
    );
    const body = fx.github.comments.find((c) => c.id === plan.id)?.body ?? "";
    expect(fx.visible(body)).toContain(
      "> **Notes from @maintainer** (with the approving review), given to every step:\n> Approved. Keep the error messages unchanged,\n> they are matched by clients.",
    );
    expect(fx.github.botComments().at(-1)?.body).toContain("they are matched by clients.");
    expect(fx.stateOf(body).buildNotes).toEqual([{ author: "maintainer", source: "review", text: review }]);
  });

  it("a plain /build adds no notes and no instructions section", async () => {
    await fx.start([write("src/retry.js", "x\n"), complete("S1")]);
    const plan = fx.seedPlan(
      samplePlan({
        verification: [],
        steps: [{ id: "S1", title: "Only step", details: "", files: ["src/retry.js"], deps: [] }],
      }),
    );
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));

    expect(stepMessages(fx.model.requests).get("S1")).not.toContain("approvers' instructions");
    const body = fx.github.comments.find((c) => c.id === plan.id)?.body ?? "";
    expect(fx.visible(body)).not.toContain("Notes from");
    expect(fx.stateOf(body).buildNotes).toEqual([]);
  });
});
