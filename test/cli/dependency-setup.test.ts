import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBareRepo, gitIn } from "../helpers/git-repo.js";
import { samplePlan, startModelServer, type ModelServer } from "../helpers/model-server.js";
import { npmProjectFiles, startRegistryDouble, type RegistryDouble } from "../helpers/registry-double.js";
import { assertCliBuilt, blueprint } from "./support.js";

// Issue #38, point 4, at the CLI (and so the eval, which drives it): `blueprint build` installs the
// checkout's locked dependencies in its own worktree before S1, like the App. Real npm, real
// bubblewrap; the registry is a double on 127.0.0.1 named as the operator's mirror.

const plan = samplePlan({
  verification: [],
  steps: [{ id: "S1", title: "Use the dependency", details: "", files: [], deps: [] }],
});

describe("blueprint build, in a checkout with a lock file", () => {
  let npm: RegistryDouble;
  let model: ModelServer | null = null;
  beforeAll(async () => {
    assertCliBuilt();
    npm = await startRegistryDouble();
  });
  afterAll(async () => {
    await model?.close();
    await npm.close();
  });

  it("runs `npm ci` in the build's worktree before S1, whose commands then find node_modules, and tells S1 so", async () => {
    const repo = createBareRepo({ "README.md": "# Hello\n", ...npmProjectFiles(npm) });
    model = await startModelServer([
      { toolCalls: [{ name: "submit_plan", arguments: plan }] },
      {
        toolCalls: [
          {
            name: "run_command",
            arguments: { command: `node -e "console.log(require('${npm.packageName}'))" > used.txt`, timeout_s: null },
          },
        ],
      },
      { toolCalls: [{ name: "complete_step", arguments: { step_id: "S1", summary: "Used it." } }] },
    ]);
    const env = {
      OPENAI_BASE_URL: model.url,
      OPENAI_API_KEY: "sk-cli-test-key-000000000000000000000",
      BLUEPRINT_NETWORK_ALLOW: `registries,127.0.0.1:${npm.port}`,
    };
    expect((await blueprint(["plan", "use the dependency"], { cwd: repo.seed, env })).code).toBe(0);
    const built = await blueprint(["build"], { cwd: repo.seed, env });

    expect(built.code).toBe(0);
    expect(npm.requests).toContain(`/${npm.packageName}/-/${npm.packageName}-1.0.0.tgz`);
    expect(String(model.requests[1]?.messages[1]?.content)).toContain(
      "Installed before this step: `npm ci --no-audit --no-fund` (npm, detected from `package-lock.json`) succeeded",
    );
    expect(gitIn(repo.seed, ["show", "blueprint/issue-1:used.txt"])).toBe("from the registry double\n");
    // The checkout itself is left alone: nothing was installed there.
    expect(gitIn(repo.seed, ["status", "--porcelain"])).toBe("");
  });
});
