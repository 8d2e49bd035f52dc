import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MintThread } from "../../src/credentials/mint-thread.js";
import { startGitHubDouble, type GitHubDouble } from "../e2e/double/github-server.js";
import { PROJECT_ROOT, requireBuiltApp } from "../e2e/support/app-process.js";

const ENTRY = path.join(PROJECT_ROOT, "lib/credentials/mint-thread-main.js");

function recordingLog() {
  const lines: { level: string; fields: unknown; message?: string }[] = [];
  const at = (level: string) => (fields: unknown, message?: string) => lines.push({ level, fields, message });
  return {
    lines,
    log: { info: at("info"), warn: at("warn"), error: at("error"), debug: () => {}, child: () => null } as never,
  };
}

describe("job tokens minted on the token thread", () => {
  let github: GitHubDouble;
  beforeAll(async () => {
    requireBuiltApp();
    github = await startGitHubDouble({
      files: { "README.md": "hi\n" },
      issues: [{ title: "t", body: "b", author: "octocat" }],
      permissions: { maintainer: "write" },
    });
  });
  afterAll(async () => github?.stop());

  const job = (installationId: number, kind: "plan" | "build" = "plan") => ({
    installationId,
    kind,
    repository: { name: "hello-world" },
  });

  it("are granted by GitHub for the job's repository, once for jobs that share a repository and kind", async () => {
    const { log } = recordingLog();
    const thread = new MintThread({
      appId: github.appId,
      privateKey: github.privateKey ?? "",
      baseUrl: github.apiUrl,
      log,
      entry: ENTRY,
    });
    try {
      const installationId = github.installationIds[0] ?? 0;
      const before = github.requests.length;
      const [first, second] = await Promise.all([
        thread.forJob(job(installationId)),
        thread.forJob(job(installationId)),
      ]);
      expect(first.token).toMatch(/^ghs_/);
      expect(second).toEqual(first);
      const grants = github.requests
        .slice(before)
        .filter((request) => request.path === `/app/installations/${installationId}/access_tokens`);
      expect(grants.map((request) => [request.status, request.auth])).toEqual([[201, "app-jwt"]]);
      expect(JSON.parse(grants[0]?.body ?? "{}")).toMatchObject({ repositories: ["hello-world"] });
    } finally {
      await thread.close();
    }
  });

  it("are refused with GitHub's status and message, and the refusal is not cached", async () => {
    const { log } = recordingLog();
    const thread = new MintThread({
      appId: github.appId,
      privateKey: github.privateKey ?? "",
      baseUrl: github.apiUrl,
      log,
      entry: ENTRY,
    });
    try {
      await expect(thread.forJob(job(999_999))).rejects.toMatchObject({
        status: 404,
        message: expect.stringContaining("installation 999999"),
      });
      await expect(thread.forJob(job(999_999))).rejects.toMatchObject({ status: 404 });
      expect(
        github.requests.filter((request) => request.path === "/app/installations/999999/access_tokens"),
      ).toHaveLength(2);
    } finally {
      await thread.close();
    }
  });

  it("asks a fresh thread for the tokens a dead one was minting, refuses them when stopped, and gives up on a thread that cannot start", async () => {
    const { lines, log } = recordingLog();
    const thread = new MintThread({
      appId: github.appId,
      privateKey: github.privateKey ?? "",
      baseUrl: github.apiUrl,
      log,
      entry: ENTRY,
    });
    const worker = () => (thread as unknown as { worker: { terminate(): Promise<number> } }).worker;
    // Killed under a job: a fresh thread mints that job's token (a token request is safe to repeat).
    const first = worker();
    const minting = thread.forJob(job(github.installationIds[0] ?? 0));
    await first.terminate();
    expect((await minting).token).toMatch(/^ghs_/);
    expect(worker()).not.toBe(first);
    expect(lines.some((line) => line.level === "error" && /token thread stopped/.test(line.message ?? ""))).toBe(true);

    // A token still being minted (another kind: the plan token above is reused without asking the thread).
    const stopped = expect(thread.forJob(job(github.installationIds[0] ?? 0, "build"))).rejects.toThrow(/stopped/);
    await thread.close();
    await stopped;

    // A thread that cannot start (here: no such entry): its job is asked once more, then refused (its claim is
    // released).
    const broken = new MintThread({
      appId: github.appId,
      privateKey: github.privateKey ?? "",
      baseUrl: github.apiUrl,
      log,
      entry: path.join(PROJECT_ROOT, "lib/credentials/no-such-thread.js"),
    });
    await expect(broken.forJob(job(github.installationIds[0] ?? 0))).rejects.toThrow();
    await broken.close();
  });
});
