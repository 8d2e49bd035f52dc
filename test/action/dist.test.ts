import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import nock from "nock";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { actionsGitHubDouble } from "../helpers/actions-github.js";
import { createBareRepo, tempDir } from "../helpers/git-repo.js";
import { samplePlan, startModelServer, type ModelServer } from "../helpers/model-server.js";
import { commentEvent, parseOutputFile, stepFiles } from "./support.js";

const DIST = path.resolve("dist/index.js");
const run = promisify(execFile);

describe("the committed bundle, dist/index.js", () => {
  let model: ModelServer | null = null;

  beforeEach(() => {
    nock.disableNetConnect();
    nock.enableNetConnect("127.0.0.1");
  });

  afterEach(async () => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
    process.exitCode = undefined;
    await model?.close();
    model = null;
    nock.cleanAll();
    nock.enableNetConnect();
  });

  it("runs as the runner starts it: a plan from an issue comment, outputs in GITHUB_OUTPUT", async () => {
    const repo = createBareRepo({ "README.md": "# Hello\n" });
    const github = actionsGitHubDouble({ permissions: { maintainer: "write" } });
    model = await startModelServer([{ toolCalls: [{ name: "submit_plan", arguments: samplePlan() }] }]);
    const step = stepFiles("issue_comment", commentEvent({ body: "/plan", cloneUrl: repo.url }), {
      "openai-base-url": model.url,
    });
    for (const [name, value] of Object.entries(step.env)) vi.stubEnv(name, value ?? "");
    vi.spyOn(process.stdout, "write").mockImplementation(() => true);

    // The bundle starts on import, reading process.env like on a runner; nock stands in for GitHub.
    await import(DIST);

    expect(process.exitCode).toBeUndefined();
    expect(github.botComments()[0]?.body).toMatch(/^## 📋 Plan v1/);
    expect(step.outputs()).toMatchObject({ status: "pending", "plan-url": github.botComments()[0]?.html_url });
  });

  it("exits 0 with status skipped for an event it does not handle, and 1 for a broken payload", async () => {
    const dir = tempDir("blueprint-dist-");
    const eventPath = path.join(dir, "event.json");
    const outputPath = path.join(dir, "output");
    writeFileSync(eventPath, "{}");
    writeFileSync(outputPath, "");
    const env = {
      PATH: process.env.PATH ?? "",
      GITHUB_EVENT_PATH: eventPath,
      GITHUB_OUTPUT: outputPath,
      "INPUT_GITHUB-TOKEN": "ghs_distTestToken000000000000000000000",
      "INPUT_STATE-SECRET": "dist-test-state-secret-0000",
    };

    const skipped = await run(process.execPath, [DIST], { env: { ...env, GITHUB_EVENT_NAME: "push" } });
    expect(skipped.stdout).toContain("Nothing to do");
    expect(parseOutputFile(readFileSync(outputPath, "utf8"))).toEqual({ status: "skipped" });

    const broken = await run(process.execPath, [DIST], { env: { ...env, GITHUB_EVENT_NAME: "issue_comment" } }).then(
      () => ({ code: 0, stdout: "" }),
      (error: { code: number; stdout: string }) => error,
    );
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(
      /::error::Blueprint could not run: the issue_comment event payload is not what GitHub sends/,
    );
    expect(broken.stdout).toContain("::add-mask::ghs_distTestToken000000000000000000000");
  });
});
