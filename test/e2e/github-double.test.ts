import { execFile } from "node:child_process";
import { generateKeyPairSync, sign } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGitHubDouble, type GitHubDouble } from "./double/github-server.js";

/** The double itself: if it let a wrong call through, the end-to-end walks would prove nothing. */

const run = promisify(execFile);
const gitEnv = (extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? "",
  HOME: os.tmpdir(),
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_TERMINAL_PROMPT: "0",
  GIT_AUTHOR_NAME: "T",
  GIT_AUTHOR_EMAIL: "t@example.test",
  GIT_COMMITTER_NAME: "T",
  GIT_COMMITTER_EMAIL: "t@example.test",
  ...extra,
});
const withToken = (token: string) =>
  gitEnv({
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "http.extraHeader",
    GIT_CONFIG_VALUE_0: `Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`,
  });

function appJwt(appId: number, privateKey: string, now = Math.floor(Date.now() / 1000)): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const unsigned = `${part({ alg: "RS256", typ: "JWT" })}.${part({ iat: now - 30, exp: now + 540, iss: appId })}`;
  return `${unsigned}.${sign("sha256", Buffer.from(unsigned), privateKey).toString("base64url")}`;
}

describe("the GitHub double", () => {
  let github: GitHubDouble;
  let scratch: string;

  beforeAll(async () => {
    github = await startGitHubDouble({
      files: { "README.md": "# hi\n" },
      issues: [{ title: "An issue" }],
      permissions: { maintainer: "maintain" },
    });
    scratch = mkdtempSync(path.join(os.tmpdir(), "github-double-test-"));
  });

  afterAll(async () => {
    await github?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  const api = (method: string, route: string, authorization?: string, body?: unknown) =>
    fetch(`${github.apiUrl}${route}`, {
      method,
      headers: {
        accept: "application/vnd.github+json",
        "content-type": "application/json",
        ...(authorization ? { authorization } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const graphql = (authorization: string, body: { query: string; variables: Record<string, unknown> }) =>
    fetch(`${github.url}/api/graphql`, {
      method: "POST",
      headers: { authorization, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  it("mints installation tokens only for a JWT signed with the App's key, and requires one on REST", async () => {
    const stranger = generateKeyPairSync("rsa", { modulusLength: 2048 })
      .privateKey.export({ type: "pkcs1", format: "pem" })
      .toString();
    expect(
      (
        await api(
          "POST",
          `/app/installations/${github.installationId}/access_tokens`,
          `Bearer ${appJwt(github.appId, stranger)}`,
        )
      ).status,
    ).toBe(401);
    expect(
      (
        await api(
          "POST",
          `/app/installations/${github.installationId}/access_tokens`,
          `Bearer ${appJwt(github.appId + 1, github.privateKey!)}`,
        )
      ).status,
    ).toBe(401);

    const minted = await api(
      "POST",
      `/app/installations/${github.installationId}/access_tokens`,
      `Bearer ${appJwt(github.appId, github.privateKey!)}`,
    );
    expect(minted.status).toBe(201);
    const { token } = (await minted.json()) as { token: string };
    expect(token).toMatch(/^ghs_/);

    const issue = "/repos/octo-org/hello-world/issues/1";
    expect((await api("GET", issue)).status).toBe(401);
    expect((await api("GET", issue, "token ghs_not-a-token")).status).toBe(401);
    expect((await api("GET", issue, `Bearer ${appJwt(github.appId, github.privateKey!)}`)).status).toBe(401);
    const ok = await api("GET", issue, `token ${token}`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ number: 1, title: "An issue" });

    const permission = await api(
      "GET",
      "/repos/octo-org/hello-world/collaborators/maintainer/permission",
      `token ${token}`,
    );
    expect(await permission.json()).toMatchObject({ permission: "write", role_name: "maintain" });
  });

  it("serves git over smart HTTP only with the installation token as Basic x-access-token", async () => {
    await expect(run("git", ["ls-remote", github.cloneUrl], { env: gitEnv() })).rejects.toThrow();
    await expect(run("git", ["ls-remote", github.cloneUrl], { env: withToken("ghs_wrong") })).rejects.toThrow();
    const token = github.issueInstallationToken();
    const { stdout } = await run("git", ["ls-remote", github.cloneUrl], { env: withToken(token) });
    expect(stdout).toContain(`${github.repository.head("main")}\trefs/heads/main`);

    const clone = path.join(scratch, "clone");
    await run("git", ["clone", "--quiet", "--filter=blob:none", github.cloneUrl, clone], { env: withToken(token) });
    writeFileSync(path.join(clone, "new.txt"), "new\n");
    await run("git", ["add", "new.txt"], { cwd: clone, env: gitEnv() });
    await run("git", ["commit", "--quiet", "-m", "add new.txt"], { cwd: clone, env: gitEnv() });
    await expect(
      run("git", ["push", "--quiet", "origin", "HEAD:refs/heads/feature"], { cwd: clone, env: gitEnv() }),
    ).rejects.toThrow();
    expect(github.repository.head("feature")).toBeNull();
    await run("git", ["push", "--quiet", "origin", "HEAD:refs/heads/feature"], { cwd: clone, env: withToken(token) });
    expect(github.repository.log("feature")).toEqual(["add new.txt", "initial commit"]);
    expect(github.requests.filter((r) => r.kind === "git" && r.status === 401).length).toBeGreaterThanOrEqual(3);
  });

  it("records calls that are not documented GitHub operations, or whose bodies do not fit the schema", async () => {
    const token = github.issueInstallationToken();
    const before = github.violations.length;
    await api("GET", "/repos/octo-org/hello-world/issues/1", `token ${token}`);
    expect(github.violations).toHaveLength(before);

    await api("GET", "/repos/octo-org/hello-world/issues/1/bananas", `token ${token}`);
    await api("PUT", "/repos/octo-org/hello-world/issues/1/comments", `token ${token}`, { body: "x" });
    await api("POST", "/repos/octo-org/hello-world/issues/1/comments", `token ${token}`, { body: "x", sticky: true });
    await api("GET", "/repos/octo-org/hello-world/issues/1/comments?per_page=100&since_id=3", `token ${token}`);
    const comment = github.state.commentsOn(1)[0]!;
    await api("POST", `/repos/octo-org/hello-world/issues/comments/${comment.id}/reactions`, `token ${token}`, {
      content: "thumbsup",
    });
    expect(github.violations.slice(before).map((v) => v.problems[0])).toEqual([
      "no documented path matches /repos/octo-org/hello-world/issues/1/bananas",
      "PUT is not documented for /repos/{owner}/{repo}/issues/{issue_number}/comments (documented: GET, POST)",
      "body.sticky: not a documented property",
      "query parameter since_id is not documented for this operation",
      expect.stringContaining('body.content: "thumbsup" is not one of'),
    ]);
  });

  it("refuses a pull request whose head branch does not exist, as GitHub does", async () => {
    const token = github.issueInstallationToken();
    const response = await api("POST", "/repos/octo-org/hello-world/pulls", `token ${token}`, {
      head: "nowhere",
      base: "main",
      title: "t",
      body: "b",
    });
    expect(response.status).toBe(422);
    expect(github.state.pulls).toHaveLength(0);
  });

  it("minimizes a comment through GraphQL's minimizeComment", async () => {
    const token = github.issueInstallationToken();
    const comment = github.state.addComment(1, github.state.bot, "old plan", true);
    const response = await graphql(`token ${token}`, {
      query:
        "mutation($id: ID!) { minimizeComment(input: { subjectId: $id, classifier: OUTDATED }) { minimizedComment { isMinimized } } }",
      variables: { id: comment.nodeId },
    });
    expect(await response.json()).toEqual({ data: { minimizeComment: { minimizedComment: { isMinimized: true } } } });
    expect(comment.minimized).toBe("OUTDATED");
  });

  it("records a GraphQL request that GitHub's schema refuses", async () => {
    const comment = github.state.addComment(1, github.state.bot, "old plan", true);
    const before = github.violations.length;
    await graphql(`token ${github.issueInstallationToken()}`, {
      query:
        "mutation($id: ID!) { minimizeComment(input: { subjectId: $id, classifier: STALE }) { minimizedComment { isMinimized } } }",
      variables: { id: comment.nodeId },
    });
    expect(github.violations.slice(before)).toEqual([
      {
        method: "POST",
        path: "/api/graphql",
        problems: [expect.stringContaining('Value "STALE" does not exist in "ReportedContentClassifiers" enum')],
      },
    ]);
  });

  it("turns a pull request into a draft and back through GraphQL, as REST cannot", async () => {
    const token = github.issueInstallationToken();
    const pull = github.state.addPull({
      head: "main",
      base: "main",
      title: "t",
      body: "b",
      draft: false,
      user: github.state.bot,
    });
    const mutate = async (name: string) => {
      const response = await fetch(`${github.url}/api/graphql`, {
        method: "POST",
        headers: { authorization: `token ${token}`, "content-type": "application/json" },
        body: JSON.stringify({
          query: `mutation($id: ID!) { ${name}(input: { pullRequestId: $id }) { pullRequest { isDraft } } }`,
          variables: { id: `PR_kwDO${pull.number}` },
        }),
      });
      return response.json();
    };
    expect(await mutate("convertPullRequestToDraft")).toEqual({
      data: { convertPullRequestToDraft: { pullRequest: { isDraft: true } } },
    });
    expect(pull.draft).toBe(true);
    expect(await mutate("markPullRequestReadyForReview")).toEqual({
      data: { markPullRequestReadyForReview: { pullRequest: { isDraft: false } } },
    });
    expect(pull.draft).toBe(false);
  });
});

describe("the GitHub double with several installations", () => {
  let github: GitHubDouble;

  beforeAll(async () => {
    github = await startGitHubDouble({
      files: { "README.md": "# hi\n" },
      issues: [{ title: "Main issue" }],
      permissions: { maintainer: "write" },
      installations: [
        { id: 7, owner: "other-org", issues: [{ title: "Other issue" }], permissions: { reader: "read" } },
      ],
    });
  });

  afterAll(async () => {
    await github?.stop();
  });

  const get = (route: string, token: string) =>
    fetch(`${github.apiUrl}${route}`, { headers: { authorization: `token ${token}` } });
  const mint = async (id: number, key = github.privateKey!) =>
    fetch(`${github.apiUrl}/app/installations/${id}/access_tokens`, {
      method: "POST",
      headers: { authorization: `Bearer ${appJwt(github.appId, key)}` },
    });

  it("gives each installation its own repository, which only its tokens open (REST and git)", async () => {
    expect(github.installationIds).toEqual([42, 7]);
    expect((await mint(8)).status).toBe(404);
    const minted = await mint(7);
    expect(minted.status).toBe(201);
    const { token } = (await minted.json()) as { token: string };
    const main = github.issueInstallationToken();

    expect(await (await get("/repos/other-org/hello-world/issues/1", token)).json()).toMatchObject({
      title: "Other issue",
    });
    expect((await get("/repos/octo-org/hello-world/issues/1", token)).status).toBe(404);
    expect((await get("/repos/other-org/hello-world/issues/1", main)).status).toBe(404);
    expect(
      await (await get("/repos/other-org/hello-world/collaborators/reader/permission", token)).json(),
    ).toMatchObject({ role_name: "read" });
    expect(
      await (await get("/repos/other-org/hello-world/collaborators/maintainer/permission", token)).json(),
    ).toMatchObject({ role_name: "none" });
    expect(github.requests.at(-1)).toMatchObject({ installationId: 7 });

    const other = github.installation(7);
    expect(other.cloneUrl).toBe(`${github.url}/other-org/hello-world.git`);
    expect(other.repository.head("main")).toBe(github.repository.head("main"));
    const { stdout } = await run("git", ["ls-remote", other.cloneUrl], { env: withToken(token) });
    expect(stdout).toContain("refs/heads/main");
    await expect(run("git", ["ls-remote", other.cloneUrl], { env: withToken(main) })).rejects.toThrow();
    await expect(
      run("git", ["ls-remote", github.cloneUrl], { env: withToken(other.issueInstallationToken()) }),
    ).rejects.toThrow();
  });

  it("numbers comments across repositories, as GitHub's ids are global", () => {
    const a = github.state.addUserComment(1, "maintainer", "/help");
    const b = github.installation(7).state.addUserComment(1, "reader", "/help");
    expect(b.id).not.toBe(a.id);
    expect(github.installation(42)).toBe(github);
  });
});

describe("the GitHub double keeping fetches (the load bench's cacheGitReads)", () => {
  let github: GitHubDouble;
  let scratch: string;

  beforeAll(async () => {
    github = await startGitHubDouble({ files: { "README.md": "# hi\n" }, cacheGitReads: true });
    scratch = mkdtempSync(path.join(os.tmpdir(), "github-double-cache-test-"));
  });

  afterAll(async () => {
    await github?.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  const refs = async (token: string) =>
    (await run("git", ["ls-remote", github.cloneUrl], { env: withToken(token) })).stdout;

  it("answers a repeated fetch from memory, still only with a token, and forgets it when a push comes through", async () => {
    const token = github.issueInstallationToken();
    const before = await refs(token);
    expect(before).toContain("refs/heads/main");
    // Written behind the double's back: a kept answer does not show it (this is why only the bench keeps them).
    github.repository.git(["update-ref", "refs/heads/behind", "refs/heads/main"]);
    expect(await refs(token)).toBe(before);
    await expect(run("git", ["ls-remote", github.cloneUrl], { env: withToken("ghs_wrong") })).rejects.toThrow();

    const clone = path.join(scratch, "clone");
    await run("git", ["clone", "--quiet", github.cloneUrl, clone], { env: withToken(token) });
    writeFileSync(path.join(clone, "new.txt"), "new\n");
    await run("git", ["add", "new.txt"], { cwd: clone, env: gitEnv() });
    await run("git", ["commit", "--quiet", "-m", "add new.txt"], { cwd: clone, env: gitEnv() });
    await run("git", ["push", "--quiet", "origin", "HEAD:refs/heads/feature"], { cwd: clone, env: withToken(token) });

    const after = await refs(token);
    expect(after).toContain(`${github.repository.head("feature")}\trefs/heads/feature`);
    expect(after).toContain("refs/heads/behind");
    // And a fresh clone after the push gets the pushed commit.
    const again = path.join(scratch, "again");
    await run("git", ["clone", "--quiet", "--branch", "feature", github.cloneUrl, again], { env: withToken(token) });
    expect((await run("git", ["log", "--format=%s", "-1"], { cwd: again, env: gitEnv() })).stdout.trim()).toBe(
      "add new.txt",
    );
  });
});
