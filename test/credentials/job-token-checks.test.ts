import { afterEach, describe, expect, it } from "vitest";
import { appTokenMinter } from "../../src/github/app-jwt.js";
import { mintJobToken } from "../../src/credentials/job-token.js";
import { jobLifetimeMs } from "../../src/credentials/sealed-token.js";
import { MAX_STEPS } from "../../src/plan/validate.js";
import { startGitHubDouble, type GitHubDouble } from "../e2e/double/github-server.js";

const quiet = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {}, child: () => quiet } as never;

describe("a planning job's token and the checks permission", () => {
  let github: GitHubDouble | undefined;
  afterEach(async () => github?.stop());

  async function mintPlanToken(installationPermissions: Record<string, string>) {
    github = await startGitHubDouble({ files: { "README.md": "hi\n" }, installationPermissions });
    const minter = appTokenMinter({
      appId: github.appId,
      privateKey: github.privateKey ?? "",
      baseUrl: github.apiUrl,
      log: quiet,
    });
    const token = await mintJobToken(minter, {
      installationId: github.installationId,
      kind: "plan",
      repository: { name: github.repository.name },
    });
    const asked = github.requests
      .filter((request) => request.path.endsWith("/access_tokens"))
      .map((request) => [
        request.status,
        (JSON.parse(request.body) as { permissions?: Record<string, string> }).permissions?.checks ?? null,
      ]);
    return { token, asked };
  }

  it("asks for checks: write, so a new plan revision gets its check run", async () => {
    const { token, asked } = await mintPlanToken({
      contents: "write",
      issues: "write",
      pull_requests: "write",
      checks: "write",
      metadata: "read",
    });
    expect(token.permissions.checks).toBe("write");
    expect(asked).toEqual([[201, "write"]]);
  });

  it("is minted without it where the installation has not accepted the permission yet (GitHub: 422), so the job still runs", async () => {
    const { token, asked } = await mintPlanToken({
      contents: "write",
      issues: "write",
      pull_requests: "write",
      metadata: "read",
    });
    expect(token.permissions).toEqual({ contents: "read", issues: "write", pull_requests: "write", metadata: "read" });
    expect(asked).toEqual([
      [422, "write"],
      [201, null],
    ]);
  });
});

describe("what a check-run click's token may do, and how long it may be renewed", () => {
  let github: GitHubDouble | undefined;
  afterEach(async () => github?.stop());

  async function mintClickToken(action: "build" | "revise") {
    github = await startGitHubDouble({ files: { "README.md": "hi\n" } });
    const minter = appTokenMinter({
      appId: github.appId,
      privateKey: github.privateKey ?? "",
      baseUrl: github.apiUrl,
      log: quiet,
    });
    const token = await mintJobToken(minter, {
      installationId: github.installationId,
      kind: "check-action",
      action,
      repository: { name: github.repository.name },
    });
    const asked = github.requests
      .filter((request) => request.path.endsWith("/access_tokens"))
      .map((request) => (JSON.parse(request.body) as { permissions?: Record<string, string> }).permissions ?? null);
    return { token, asked };
  }

  it("gives the Build button a build's token (the installation's permissions, on the repository only) and the Revise button a comment's (no push)", async () => {
    const build = await mintClickToken("build");
    expect(build.asked).toEqual([null]);
    expect(build.token.permissions.contents).toBe("write");
    await github?.stop();
    const revise = await mintClickToken("revise");
    expect(revise.asked).toEqual([
      { contents: "read", issues: "write", pull_requests: "write", metadata: "read", checks: "write" },
    ]);
    expect(revise.token.permissions.contents).toBe("read");
  });

  it("lets a build the Build button started renew its token as long as a /build's, and a Revise click only for one run", () => {
    const run = 20 * 60_000;
    expect(jobLifetimeMs({ kind: "check-action", action: "build" }, run)).toBe(jobLifetimeMs({ kind: "build" }, run));
    expect(jobLifetimeMs({ kind: "check-action", action: "build" }, run)).toBeGreaterThan(MAX_STEPS * run);
    expect(jobLifetimeMs({ kind: "check-action", action: "revise" }, run)).toBe(jobLifetimeMs({ kind: "plan" }, run));
    expect(jobLifetimeMs({ kind: "plan" }, run)).toBeLessThan(2 * run + 60 * 60_000);
  });
});
