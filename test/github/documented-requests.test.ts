import { Octokit } from "@octokit/rest";
import nock from "nock";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createOctokitPort, type PortOctokit } from "../../src/github/octokit-port.js";
import { githubDouble, INSTALLATION_TOKEN, type GitHubDouble } from "../helpers/github-double.js";
import { failOnUndocumented } from "../helpers/undocumented-requests.js";

const SHA = "a".repeat(40);
const ACTIONS = { id: 15368, slug: "github-actions" };
const where = { owner: "Codertocat", repo: "Hello-World" };

describe("the nock GitHub double checks what it serves against GitHub's own description", () => {
  let github: GitHubDouble;
  const octokit = () => new Octokit({ auth: INSTALLATION_TOKEN, request: { retries: 0 } });
  const port = () =>
    createOctokitPort({
      octokit: octokit() as unknown as PortOctokit,
      repo: {
        owner: where.owner,
        name: where.repo,
        cloneUrl: "https://github.com/Codertocat/Hello-World.git",
        defaultBranch: "main",
        htmlUrl: "https://github.com/Codertocat/Hello-World",
      },
      number: 1,
      isOwnComment: () => false,
    });

  beforeEach(() => {
    nock.disableNetConnect();
    github = githubDouble();
  });
  afterEach(() => {
    github.done();
    nock.enableNetConnect();
  });

  it("finds the follow-up's reads and writes documented: review threads, replies, resolution, failing checks, job logs", async () => {
    const thread = github.addReviewThread({
      pullRequest: 7,
      path: "src/retry.js",
      line: 3,
      body: "Name the constant.",
      diffHunk: "@@ -1,3 +1,3 @@\n-a\n+b",
    });
    github.addCheckRun({
      name: "test",
      head_sha: SHA,
      external_id: null,
      app: ACTIONS,
      conclusion: "failure",
      output: { title: "1 test failed", summary: "retries" },
      annotations: [{ path: "src/retry.js", start_line: 2, message: "expected 3 tries" }],
      log: "##[group]Run npm test\nnot ok 1 - retries three times\n##[error]Process completed with exit code 1.",
    });
    const reviews = port().reviews!;

    const [read] = await reviews.threads(7);
    await reviews.reply(7, read!.comments[0]!.id, "Done in abc1234.");
    await reviews.resolve(read!.id);
    const [failure] = await port().checks!.failures(SHA);

    expect(read).toMatchObject({ id: thread.id, path: "src/retry.js", line: 3 });
    expect(thread.isResolved).toBe(true);
    expect(failure).toMatchObject({ name: "test", annotations: [{ path: "src/retry.js", line: 2 }] });
    expect(failure!.logTail).toContain("not ok 1 - retries three times");
    expect(github.violations).toEqual([]);
    expect(github.operations.map(({ method, operation }) => `${method} ${operation}`)).toEqual([
      "POST query repository",
      "POST pulls/create-reply-for-review-comment",
      "POST mutation resolveReviewThread",
      "GET checks/list-for-ref",
      "GET checks/list-annotations",
      "GET actions/download-job-logs-for-workflow-run",
    ]);
  });

  it("fails the test on a GraphQL field GitHub's schema does not have, naming the request and the field", async () => {
    await octokit().graphql(
      `query($owner: String!, $name: String!) {
        repository(owner: $owner, name: $name) { pullRequest(number: 7) { reviewThreads(first: 5) { nodes { id resolved } } } }
      }`,
      { owner: where.owner, name: where.repo },
    );

    expect(github.violations).toEqual([
      {
        method: "POST",
        path: "/graphql query($owner: String!, $name: String!) {",
        problems: [
          'Cannot query field "resolved" on type "PullRequestReviewThread". Did you mean "isResolved" or "resolvedBy"? (line 2, column 112)',
        ],
      },
    ]);
    expect(failOnUndocumented).toThrow(
      /does not document[^]*POST \/graphql query\(\$owner[^]*Cannot query field "resolved" on type "PullRequestReviewThread"/,
    );
  });

  it("fails the test on GraphQL variables the operation does not take as sent", async () => {
    // GitHub would refuse it; the double's answer does not matter here, only that the test fails.
    await octokit()
      .graphql("mutation($id: ID!) { resolveReviewThread(input: { threadId: $id }) { thread { id } } }", {
        threadId: "PRRT_1",
      })
      .catch(() => null);

    expect(github.violations.flatMap((violation) => violation.problems)).toEqual([
      'Variable "$id" of required type "ID!" was not provided. (line 1, column 10)',
      "variable $threadId is sent but the operation does not declare it",
    ]);
    expect(failOnUndocumented).toThrow(/Variable "\$id" of required type "ID!" was not provided/);
  });

  it("fails the test on a REST body, query or value GitHub does not document for the operation", async () => {
    github.addReviewThread({ pullRequest: 7, path: "a.js", line: 1, body: "x", diffHunk: "@@" });
    const commentId = github.reviewThreads[0]!.comments[0]!.databaseId;
    // Routes as plain strings: Octokit's types would refuse these requests before they were sent.
    const request = (route: string, parameters: Record<string, unknown>) => octokit().request(route, parameters);
    await request("POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies", {
      ...where,
      pull_number: 7,
      comment_id: commentId,
      comment: "Done.",
    });
    await request("GET /repos/{owner}/{repo}/commits/{ref}/check-runs", {
      ...where,
      ref: SHA,
      filter: "newest",
      conclusion: "failure",
    });

    expect(github.violations).toEqual([
      {
        method: "POST",
        path: `/repos/Codertocat/Hello-World/pulls/7/comments/${commentId}/replies (pulls/create-reply-for-review-comment)`,
        problems: ['body: the required property "body" is missing', "body.comment: not a documented property"],
      },
      {
        method: "GET",
        path: `/repos/Codertocat/Hello-World/commits/${SHA}/check-runs?filter=newest&conclusion=failure (checks/list-for-ref)`,
        problems: [
          'query parameter filter: "newest" is not one of ["latest","all"]',
          "query parameter conclusion is not documented for this operation",
        ],
      },
    ]);
    expect(failOnUndocumented).toThrow(
      /2 request\(s\)[^]*POST \/repos[^]*replies[^]*- body: the required property "body" is missing[^]*GET \/repos[^]*check-runs/,
    );
  });
});
