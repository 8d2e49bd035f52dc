import { describe, expect, it } from "vitest";
import { loadEnv } from "../../src/config/env.js";
import { cloneUrlOnHost, githubWebUrl, repositoryOnHost } from "../../src/github/github-host.js";
import { tokenPorts } from "../../src/github/token-port.js";
import type { Job } from "../../src/jobs/job.js";
import type { Logger } from "../../src/workflow/deps.js";

/** docs/security.md: workers derive clone and push URLs from the configured GitHub host, never from the job. */

const quiet: Logger = { info: () => {}, warn: () => {}, error: () => {} };
const repository = { owner: "octo-org", name: "hello-world", defaultBranch: "main" };

describe("where a job's repository is cloned from and pushed to", () => {
  it("is github.com by default, and Probot's GHE_HOST and GHE_PROTOCOL otherwise (GitHub Enterprise, a local double)", () => {
    expect(repositoryOnHost(githubWebUrl({ GHE_PROTOCOL: "https" }), repository)).toEqual({
      ...repository,
      cloneUrl: "https://github.com/octo-org/hello-world.git",
      htmlUrl: "https://github.com/octo-org/hello-world",
    });
    expect(
      repositoryOnHost(githubWebUrl({ GHE_HOST: "127.0.0.1:8123", GHE_PROTOCOL: "http" }), repository).cloneUrl,
    ).toBe("http://127.0.0.1:8123/octo-org/hello-world.git");
  });

  it("a worker's ports use the configured host whatever clone and web URLs the job carries", () => {
    const env = loadEnv({ GHE_HOST: "ghe.example.com", PATH: process.env.PATH ?? "" });
    const job = {
      kind: "help",
      deliveryId: "d-1",
      installationId: 1,
      number: 1,
      actor: "maintainer",
      receivedAt: 0,
      commentId: 1,
      repository: {
        ...repository,
        cloneUrl: "https://attacker.example/loot.git",
        htmlUrl: "https://attacker.example/loot",
      },
    } satisfies Job;
    const ports = tokenPorts(env, quiet).portsFor(job, { token: "ghs_x", permissions: {} });
    for (const port of [ports.ack, ports.reply, ports.work]) {
      expect(port.repo.cloneUrl).toBe("https://ghe.example.com/octo-org/hello-world.git");
      expect(port.commitUrl("abc")).toBe("https://ghe.example.com/octo-org/hello-world/commit/abc");
    }
  });
});

describe("a webhook's repository.clone_url checked against the configured host", () => {
  const github = "https://github.com";

  it("accepts GitHub's own URL for the repository (case aside), and refuses any other host, scheme, path or credentials", () => {
    const at = (cloneUrl: string) => cloneUrlOnHost(github, { ...repository, cloneUrl });
    expect(at("https://github.com/octo-org/hello-world.git")).toBe(true);
    expect(at("https://GitHub.com/Octo-Org/Hello-World.git")).toBe(true);
    expect(at("https://github.com:443/octo-org/hello-world.git")).toBe(true);
    expect(at("https://attacker.example/octo-org/hello-world.git")).toBe(false);
    expect(at("http://github.com/octo-org/hello-world.git")).toBe(false);
    expect(at("https://github.com/octo-org/other.git")).toBe(false);
    expect(at("https://user:pass@github.com/octo-org/hello-world.git")).toBe(false);
    expect(at("file:///tmp/octo-org/hello-world.git")).toBe(false);
    expect(at("not a url")).toBe(false);
  });
});
