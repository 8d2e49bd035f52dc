import nock from "nock";
import { expect, it } from "vitest";
import { commentPayload } from "../helpers/app.js";
import { useAppFixture } from "../helpers/app-fixture.js";

const fx = useAppFixture({ files: { "README.md": "# Hello\n" } });

const permissionCalls = () =>
  fx.github.requests.filter((r) => r.method === "GET" && r.path.endsWith("/permission")).length;

it("handles GitHub's redelivery of a command whose permission check failed, instead of dropping it", async () => {
  // Registered before the double, so it answers first, once.
  const outage = nock("https://api.github.com")
    .get("/repos/Codertocat/Hello-World/collaborators/maintainer/permission")
    .reply(502, { message: "Bad Gateway" });
  await fx.start([]);
  const payload = commentPayload({ body: "/cancel", cloneUrl: fx.repo.url, commentId: 4242 });
  await fx.app.deliver("issue_comment", payload, "delivery-outage");
  expect(outage.isDone()).toBe(true);
  expect(fx.github.reactions).toEqual([]);
  expect(fx.github.botComments()).toEqual([]);

  await fx.app.deliver("issue_comment", payload, "delivery-outage");
  expect(fx.github.reactions).toEqual([{ commentId: 4242, content: "eyes" }]);

  // Handled now: a further redelivery is a duplicate again.
  await fx.app.deliver("issue_comment", payload, "delivery-outage");
  expect(fx.github.reactions).toHaveLength(1);
});

it("asks GitHub for a person's permission once for a burst of their commands", async () => {
  await fx.start([], {}, { github: { permissions: { maintainer: "write", reader: "read" } } });
  await fx.app.deliver("issue_comment", commentPayload({ body: "/help", cloneUrl: fx.repo.url }));
  await fx.app.deliver("issue_comment", commentPayload({ body: "/status", cloneUrl: fx.repo.url }));
  await fx.app.deliver("issue_comment", commentPayload({ body: "/plan", login: "reader", cloneUrl: fx.repo.url }));
  await fx.app.deliver("issue_comment", commentPayload({ body: "/cancel", login: "reader", cloneUrl: fx.repo.url }));
  expect(permissionCalls()).toBe(1); // /help and /status need none; the reader's two commands share one
  expect(fx.github.reactions).toHaveLength(2);
  expect(fx.github.botComments().filter((c) => /write/.test(c.body) && c.body.includes("@reader"))).toHaveLength(2);
});

it("answers /help and /status for anyone, without asking for their permission, and refuses their /plan", async () => {
  await fx.start([], {}, { github: { permissions: { reader: "read" } } });
  await fx.app.deliver("issue_comment", commentPayload({ body: "/help", login: "outsider", cloneUrl: fx.repo.url }));
  await fx.app.deliver("issue_comment", commentPayload({ body: "/status", login: "reader", cloneUrl: fx.repo.url }));
  expect(permissionCalls()).toBe(0);
  expect(fx.github.botComments().map((c) => c.body.split("\n")[0])).toEqual([
    "### Blueprint commands",
    "### Blueprint status",
  ]);
  await fx.app.deliver("issue_comment", commentPayload({ body: "/plan", login: "outsider", cloneUrl: fx.repo.url }));
  expect(fx.github.botComments()).toHaveLength(3);
  expect(fx.github.botComments()[2]!.body).toMatch(/^Sorry @outsider/);
});

it("shares the permission answers with the jobs: a /build checked by intake and by the repository's min_permission asks GitHub once", async () => {
  fx.repo.commit({ ".github/blueprint.yml": "min_permission: maintain\n" }, "configure");
  await fx.start([]);
  fx.seedPlan({
    title: "One",
    summary: "s",
    steps: [{ id: "S1", title: "One", details: "", files: [], deps: [] }],
    risks: [],
    verification: [],
  });
  await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
  expect(fx.github.botComments().at(-1)!.body).toMatch(/allows only people with maintain access/);
  expect(permissionCalls()).toBe(1);
});
