import { Octokit } from "@octokit/rest";
import nock from "nock";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadEnv } from "../../src/config/env.js";
import { createOctokitPort, type PortOctokit } from "../../src/github/octokit-port.js";
import { MARKER_PREFIX } from "../../src/github/state-marker.js";
import { LocalJobs } from "../../src/jobs/local-jobs.js";
import { commandJob } from "../../src/jobs/from-webhook.js";
import type { Job } from "../../src/jobs/job.js";
import { JobMetrics } from "../../src/jobs/metrics.js";
import { createWorkflowDeps } from "../../src/app/create-deps.js";
import type { Logger } from "../../src/workflow/deps.js";
import { createBareRepo, tempDir } from "../helpers/git-repo.js";
import { BOT_LOGIN, githubDouble } from "../helpers/github-double.js";
import { PATIENCE_MS } from "../helpers/patience.js";

/**
 * The local worker tells the intake which of its jobs are unfinished, so that a fresh worker takes
 * them over if it dies. A job stopped with `/cancel` must not count as unfinished while it winds
 * down to its safe point: the next worker would resume it, and the `/cancel` would be lost.
 */

const quiet = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  debug: () => undefined,
} as unknown as Logger;
beforeEach(() => {
  nock.disableNetConnect();
  nock.enableNetConnect("127.0.0.1");
});
afterEach(() => {
  nock.cleanAll();
  nock.enableNetConnect();
});

async function until(what: string, ready: () => boolean): Promise<void> {
  const deadline = Date.now() + PATIENCE_MS;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("the local worker's account of unfinished jobs", () => {
  it("counts a running job stopped with /cancel as finished at once, not when it reaches its safe point", async () => {
    const github = githubDouble({ permissions: { maintainer: "write" } });
    const repo = createBareRepo({ "README.md": "# Hello\n" });
    const repository = {
      owner: "Codertocat",
      name: "Hello-World",
      cloneUrl: repo.url,
      defaultBranch: "main",
      htmlUrl: "https://github.com/Codertocat/Hello-World",
    };
    const env = loadEnv({
      BLUEPRINT_WORKDIR: tempDir("blueprint-workdir-"),
      BLUEPRINT_STATE_SECRET: "a-state-secret-for-the-tests-0000",
      PATH: process.env.PATH ?? "",
    });
    const port = createOctokitPort({
      octokit: new Octokit({
        auth: "ghs_TestInstallationToken0000000000000000",
        request: { retries: 0 },
      }) as unknown as PortOctokit,
      repo: repository,
      number: 1,
      isOwnComment: (comment) => comment.user?.login === BOT_LOGIN && comment.body.includes(MARKER_PREFIX),
    });
    const settled: string[] = [];
    const stopping: string[] = [];
    let finishWork = () => {};
    const backend = new LocalJobs({
      deps: createWorkflowDeps(env, quiet),
      portsFor: async () => ({ ack: port, reply: port, work: port }),
      concurrency: 2,
      metrics: new JobMetrics({ processMetrics: false }),
      // The job runner: the build keeps running after its abort until the test lets it reach its safe point.
      runWork: (job, signal) =>
        new Promise<void>((resolve) => {
          finishWork = resolve;
          signal.addEventListener("abort", () => stopping.push(job.deliveryId), { once: true });
        }),
      onSettled: (job, phase) => settled.push(`${job.deliveryId} ${phase}`),
    });
    const comment = (deliveryId: string, commentId: number, body: string): Job => {
      const job = commandJob(
        {
          deliveryId,
          installationId: 42,
          repository,
          number: 1,
          actor: "maintainer",
          receivedAt: Date.now(),
          commentId,
        },
        body,
      );
      if (!job) throw new Error("not a job");
      return job;
    };

    // On GitHub as the job says: its worker reads it again before the build starts.
    const build = github.addUserComment("maintainer", "/build");
    await backend.submit({ job: comment("build-1", build.id, "/build"), keys: ["delivery:build-1"] });
    await until("the build to run", () => settled.includes("build-1 triaged"));
    await backend.submit({ job: comment("cancel-1", 12, "/cancel"), keys: ["delivery:cancel-1"] });
    await until("the /cancel to be handled", () => settled.includes("cancel-1 finished"));

    expect(stopping).toEqual(["build-1"]);
    // Still winding down, and already not the intake's to hand to another worker.
    expect(settled).toContain("build-1 finished");
    finishWork();
    await backend.idle();
  });
});
