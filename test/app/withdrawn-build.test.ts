import { describe, expect, it } from "vitest";
import { commentPayload } from "../helpers/app.js";
import { stateOf, useAppFixture } from "../helpers/app-fixture.js";
import { samplePlan } from "../helpers/model-server.js";

const onePlan = samplePlan({
  verification: [],
  steps: [{ id: "S1", title: "Add a retry helper", details: "Create src/retry.js", files: ["src/retry.js"], deps: [] }],
});
const script = [
  { toolCalls: [{ name: "write_file", arguments: { path: "src/retry.js", content: "x\n" } }] },
  { toolCalls: [{ name: "complete_step", arguments: { step_id: "S1", summary: "did S1" } }] },
];
const COMMENT_ID = 77_001;

/**
 * A `/build` taken back while its job waited (deleted, or edited into something else) builds nothing, whichever queue
 * the job waited in: here the App's own local queue, where the job is worked in this process. The comment is changed on
 * GitHub as Blueprint acknowledges it (its 👀, at triage), before the job's turn on the thread.
 */
describe("a /build deleted or edited before its job runs, with the local queue", () => {
  const fx = useAppFixture({ files: { "README.md": "# Hello\n" } });

  /** The App, with GitHub's double doing `meanwhile` to the `/build` comment as the 👀 reaches it. */
  async function buildWith(meanwhile: (id: number) => void) {
    await fx.start(
      script,
      {},
      {
        github: { onReaction: (id, content) => void (id === COMMENT_ID && content === "eyes" && meanwhile(id)) },
      },
    );
    const plan = fx.seedPlan(onePlan);
    await fx.app.deliver(
      "issue_comment",
      commentPayload({ body: "/build", cloneUrl: fx.repo.url, commentId: COMMENT_ID }),
    );
    return plan;
  }

  const again = "Comment `/build` again (a new comment: an edited one is not read as a command) to build the plan.";

  it("deleted: nothing is built, and the thread is told why", async () => {
    const plan = await buildWith((id) => fx.github.deleteComment(id));
    expect(fx.model.requests).toHaveLength(0);
    expect(() => fx.repo.head("blueprint/issue-1")).toThrow();
    expect(fx.github.botComments().at(-1)?.body).toBe(
      `@maintainer's \`/build\` is no longer on this thread (it was deleted before its build started), so nothing is built. ${again}`,
    );
    expect(stateOf(fx.github.comments.find((comment) => comment.id === plan.id)!.body).status).toBe("pending");
  });

  it.each(["/build --fresh", "Actually, wait: do not /build yet."])(
    "edited (to %j): nothing is built, and the thread is told why",
    async (edit) => {
      const plan = await buildWith((id) => fx.github.editComment(id, edit));
      expect(fx.model.requests).toHaveLength(0);
      expect(() => fx.repo.head("blueprint/issue-1")).toThrow();
      expect(fx.github.botComments().at(-1)?.body).toBe(
        `@maintainer's \`/build\` was edited before its build started and no longer reads as the command it was, so nothing is built. ${again}`,
      );
      expect(stateOf(fx.github.comments.find((comment) => comment.id === plan.id)!.body).status).toBe("pending");
    },
  );

  it("untouched: GitHub's comment is read again, and it builds", async () => {
    await buildWith(() => {});
    expect(fx.repo.log("blueprint/issue-1")).toEqual(["S1: Add a retry helper", "initial commit"]);
    expect(
      fx.github.requests.filter(
        (request) => request.method === "GET" && request.path.endsWith(`/comments/${COMMENT_ID}`),
      ),
    ).toHaveLength(1);
  });
});
