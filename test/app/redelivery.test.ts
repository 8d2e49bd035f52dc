import nock from "nock";
import { afterEach, beforeEach, expect, it } from "vitest";
import { createBareRepo, type BareRepo } from "../helpers/git-repo.js";
import { githubDouble, type GitHubDouble } from "../helpers/github-double.js";
import { commentPayload, startTestApp, type TestApp } from "../helpers/app.js";

let repo: BareRepo;
let github: GitHubDouble;
let app: TestApp;

beforeEach(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect("127.0.0.1");
  repo = createBareRepo({ "README.md": "# Hello\n" });
});

afterEach(() => {
  nock.cleanAll();
  nock.enableNetConnect();
});

const permissionCalls = () => github.requests.filter((r) => r.method === "GET" && r.path.endsWith("/permission")).length;

it("handles GitHub's redelivery of a command whose permission check failed, instead of dropping it", async () => {
  // Registered before the double, so it answers first, once.
  const outage = nock("https://api.github.com").get("/repos/Codertocat/Hello-World/collaborators/maintainer/permission").reply(502, { message: "Bad Gateway" });
  github = githubDouble({ permissions: { maintainer: "write" } });
  app = await startTestApp();
  const payload = commentPayload({ body: "/cancel", cloneUrl: repo.url, commentId: 4242 });
  await app.deliver("issue_comment", payload, "delivery-outage");
  expect(outage.isDone()).toBe(true);
  expect(github.reactions).toEqual([]);
  expect(github.botComments()).toEqual([]);

  await app.deliver("issue_comment", payload, "delivery-outage");
  expect(github.reactions).toEqual([{ commentId: 4242, content: "eyes" }]);

  // Handled now: a further redelivery is a duplicate again.
  await app.deliver("issue_comment", payload, "delivery-outage");
  expect(github.reactions).toHaveLength(1);
});

it("asks GitHub for a person's permission once for a burst of their commands", async () => {
  github = githubDouble({ permissions: { maintainer: "write", reader: "read" } });
  app = await startTestApp();
  await app.deliver("issue_comment", commentPayload({ body: "/help", cloneUrl: repo.url }));
  await app.deliver("issue_comment", commentPayload({ body: "/status", cloneUrl: repo.url }));
  await app.deliver("issue_comment", commentPayload({ body: "/plan", login: "reader", cloneUrl: repo.url }));
  await app.deliver("issue_comment", commentPayload({ body: "/cancel", login: "reader", cloneUrl: repo.url }));
  expect(permissionCalls()).toBe(1); // /help and /status need none; the reader's two commands share one
  expect(github.reactions).toHaveLength(2);
  expect(github.botComments().filter((c) => /write/.test(c.body) && c.body.includes("@reader"))).toHaveLength(2);
});

it("answers /help and /status for anyone, without asking for their permission, and refuses their /plan", async () => {
  github = githubDouble({ permissions: { reader: "read" } });
  app = await startTestApp();
  await app.deliver("issue_comment", commentPayload({ body: "/help", login: "outsider", cloneUrl: repo.url }));
  await app.deliver("issue_comment", commentPayload({ body: "/status", login: "reader", cloneUrl: repo.url }));
  expect(permissionCalls()).toBe(0);
  expect(github.botComments().map((c) => c.body.split("\n")[0])).toEqual(["### Blueprint commands", "### Blueprint status"]);
  await app.deliver("issue_comment", commentPayload({ body: "/plan", login: "outsider", cloneUrl: repo.url }));
  expect(github.botComments()).toHaveLength(3);
  expect(github.botComments()[2]!.body).toMatch(/^Sorry @outsider/);
});
