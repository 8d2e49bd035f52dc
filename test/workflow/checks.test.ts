import { Octokit } from "@octokit/rest";
import { afterEach, describe, expect, it } from "vitest";
import { createOctokitPort, type PortOctokit } from "../../src/github/octokit-port.js";
import { ownCommentMatcher } from "../../src/github/own-comment.js";
import { writeCheckRun } from "../../src/workflow/surfaces/checks.js";
import { startGitHubDouble, type GitHubDouble } from "../e2e/double/github-server.js";

/** A warning log that remembers what it was told. */
function recordingLog() {
  const warnings: string[] = [];
  return {
    warnings,
    log: { info: () => {}, error: () => {}, warn: (_: object, message?: string) => warnings.push(message ?? "") },
  };
}

describe("writing a check run through the port, on the GitHub double", () => {
  let github: GitHubDouble | undefined;
  afterEach(async () => github?.stop());

  async function portFor(installationPermissions: Record<string, string>) {
    github = await startGitHubDouble({
      files: { "README.md": "hi\n" },
      issues: [{ title: "t" }],
      installationPermissions,
    });
    const octokit = new Octokit({
      auth: github.issueInstallationToken(),
      baseUrl: github.apiUrl,
      request: { retries: 0 },
    }) as unknown as PortOctokit;
    const repo = {
      owner: github.repository.owner,
      name: github.repository.name,
      cloneUrl: github.cloneUrl,
      defaultBranch: "main",
      htmlUrl: github.htmlUrl,
    };
    return createOctokitPort({
      octokit,
      repo,
      number: 1,
      isOwnComment: ownCommentMatcher({ appId: github.appId, botLogin: github.botLogin }),
    });
  }
  const run = (headSha: string, conclusion?: "success") => ({
    name: "Blueprint build",
    headSha,
    externalId: "blueprint-build:#1:v1",
    status: conclusion ? ("completed" as const) : ("in_progress" as const),
    conclusion,
    title: "t",
    summary: "s",
  });

  it("creates the check run once, then updates that one; another app's run with the same name and id is not its own", async () => {
    const port = await portFor({ contents: "write", issues: "write", checks: "write", metadata: "read" });
    const double = github as GitHubDouble;
    const sha = double.repository.head("main") ?? "";
    double.state.addCheckRun({
      ...run(sha),
      externalId: "blueprint-build:#1:v1",
      conclusion: null,
      text: null,
      annotations: [],
      actions: [],
      app: { id: 999, slug: "impostor" },
      completedAt: null,
    });
    const { log, warnings } = recordingLog();

    const first = await writeCheckRun(port, log, run(sha));
    const again = await writeCheckRun(port, log, run(sha, "success"));

    expect(again).toBe(first);
    const own = double.state.checkRuns.filter((candidate) => candidate.app.id === double.appId);
    expect(own.map((candidate) => candidate.history)).toEqual([["in_progress/-", "completed/success"]]);
    expect(double.state.checkRuns.find((candidate) => candidate.app.id === 999)?.history).toEqual(["in_progress/-"]);
    expect(warnings).toEqual([]);
    expect(double.violations).toEqual([]);
  });

  it("reads a check run back by id as GitHub has it: its name, commit, external id, conclusion and whether this app made it; null when there is none", async () => {
    const port = await portFor({ contents: "write", issues: "write", checks: "write", metadata: "read" });
    const double = github as GitHubDouble;
    const sha = double.repository.head("main") ?? "";
    const created = await writeCheckRun(port, recordingLog().log, {
      ...run(sha),
      name: "Blueprint plan",
      externalId: "blueprint-plan:#1:v2",
    });
    const other = double.state.addCheckRun({
      ...run(sha),
      externalId: "blueprint-plan:#1:v2",
      conclusion: null,
      text: null,
      annotations: [],
      actions: [],
      app: { id: 999, slug: "impostor" },
      completedAt: null,
    });

    expect(await port.checks?.get(created ?? 0)).toEqual({
      name: "Blueprint plan",
      headSha: sha,
      externalId: "blueprint-plan:#1:v2",
      conclusion: null,
      own: true,
    });
    expect(await port.checks?.get(other.id)).toEqual({
      name: "Blueprint build",
      headSha: sha,
      externalId: "blueprint-plan:#1:v2",
      conclusion: null,
      own: false,
    });
    expect(await port.checks?.get(424242)).toBeNull();
    expect(double.violations).toEqual([]);
  });

  it("skips check runs for a token that may not write them: told once, never failing the job", async () => {
    const port = await portFor({ contents: "write", issues: "write", metadata: "read" });
    const double = github as GitHubDouble;
    const sha = double.repository.head("main") ?? "";
    const { log, warnings } = recordingLog();

    expect(await writeCheckRun(port, log, run(sha))).toBeNull();
    expect(await writeCheckRun(port, log, run(sha, "success"))).toBeNull();

    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("403");
    expect(
      double.requests
        .filter((request) => request.path.includes("/check-runs") && request.method === "POST")
        .map((request) => request.status),
    ).toEqual([403]);
    expect(double.state.checkRuns).toEqual([]);
  });
});
