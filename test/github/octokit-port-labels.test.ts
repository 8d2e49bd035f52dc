import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOctokitPort } from "../../src/github/octokit-port.js";
import { DEFAULT_LABELS, ThreadLabels } from "../../src/workflow/surfaces/labels.js";
import type { ThreadPort } from "../../src/workflow/ports.js";
import { startGitHubDouble, type GitHubDouble } from "../e2e/double/github-server.js";

/** The port's label and branch calls against the GitHub double, each checked against GitHub's OpenAPI description. */
describe("labels and branches through the Octokit port", () => {
  let github: GitHubDouble;
  let port: ThreadPort;
  const warnings: unknown[] = [];
  const log = { warn: (object: object) => warnings.push(object) };

  beforeAll(async () => {
    github = await startGitHubDouble({ files: { "README.md": "# hi\n" }, issues: [{ title: "An issue" }] });
    const octokit = new Octokit({
      auth: github.issueInstallationToken(),
      baseUrl: github.apiUrl,
      log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    });
    const repo = {
      owner: github.repository.owner,
      name: github.repository.name,
      cloneUrl: github.cloneUrl,
      defaultBranch: "main",
      htmlUrl: github.htmlUrl,
    };
    port = createOctokitPort({ octokit, repo, number: 1, isOwnComment: () => false });
  });

  afterAll(async () => {
    await github?.stop();
  });

  const issueLabels = () => github.state.issues.get(1)?.labels;

  it("moves the thread's one Blueprint label, creating it on first use and leaving others alone", async () => {
    github.state.addLabel({ name: "bug", color: "d73a4a", description: null });
    github.state.issues.get(1)?.labels.push("bug");
    const labels = new ThreadLabels(port, {}, log, "delivery-1");

    await labels.show("planned");
    expect(issueLabels()).toEqual(["bug", "blueprint: planned"]);
    expect(github.state.label("blueprint: planned")).toMatchObject({
      color: DEFAULT_LABELS.planned.color,
      description: DEFAULT_LABELS.planned.description,
    });
    await labels.show("building");
    await labels.show("built");
    expect(issueLabels()).toEqual(["bug", "blueprint: built"]);
    // A label someone took off meanwhile is simply not there to remove.
    github.state.issues.get(1)?.labels.splice(1, 1);
    await labels.show("failed");
    expect(issueLabels()).toEqual(["bug", "blueprint: failed"]);
    expect(warnings).toEqual([]);

    expect(await port.createLabel(DEFAULT_LABELS.built)).toBe(false);
    await port.removeThreadLabel("not carried");
    expect(await port.threadLabels()).toEqual(["bug", "blueprint: failed"]);
  });

  it("reads the repository's delete-on-merge setting, and says it cannot tell when GitHub leaves the field out", async () => {
    expect(await port.deletesMergedBranches()).toBeNull();
    github.state.deleteBranchOnMerge = false;
    expect(await port.deletesMergedBranches()).toBe(false);
    github.state.deleteBranchOnMerge = true;
    expect(await port.deletesMergedBranches()).toBe(true);
  });

  it("used only documented operations, with bodies that fit their schemas", () => {
    expect(github.violations).toEqual([]);
    expect(github.unimplemented.map((r) => `${r.method} ${r.path}`)).toEqual([]);
    const operations = new Set(github.requests.map((r) => r.operationId));
    for (const operation of [
      "issues/list-labels-on-issue",
      "issues/list-labels-for-repo",
      "issues/create-label",
      "issues/add-labels",
      "issues/remove-label",
      "repos/get",
    ]) {
      expect(operations).toContain(operation);
    }
  });
});
