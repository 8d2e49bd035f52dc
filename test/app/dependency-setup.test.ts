import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commentPayload } from "../helpers/app.js";
import { stateOf, useAppFixture } from "../helpers/app-fixture.js";
import { samplePlan, type ModelRequest } from "../helpers/model-server.js";
import {
  npmProjectFiles,
  startPypiDouble,
  startRegistryDouble,
  type PypiDouble,
  type RegistryDouble,
} from "../helpers/registry-double.js";

// Issue #38, point 4: without `setup:`, a build installs the dependencies its lock files name, in the
// sandbox, with the registries for that install alone; the steps keep `network: none`, and are told.
// Real npm and pip, real bubblewrap; the registries are doubles on 127.0.0.1, the operator's mirror.

const plan = samplePlan({
  verification: [],
  steps: [{ id: "S1", title: "Use the dependency", details: "", files: [], deps: [] }],
});
const run = (command: string) => ({ toolCalls: [{ name: "run_command", arguments: { command, timeout_s: null } }] });
const complete = { toolCalls: [{ name: "complete_step", arguments: { step_id: "S1", summary: "Used it." } }] };
/** A direct connection to the registry's port: the steps' own network must not reach it. */
const direct = (port: number) =>
  `(exec 3<>/dev/tcp/127.0.0.1/${port} && echo "registry: reached") 2>/dev/null || echo "registry: unreachable"`;
const firstMessage = (request: ModelRequest | undefined) => String(request?.messages[1]?.content ?? "");
const lastMessage = (request: ModelRequest | undefined) => String(request?.messages.at(-1)?.content ?? "");

let npm: RegistryDouble;
let pypi: PypiDouble;
beforeAll(async () => {
  npm = await startRegistryDouble();
  pypi = await startPypiDouble();
});
afterAll(async () => {
  await npm.close();
  await pypi.close();
});

describe("a build's dependencies, installed before S1 from the repository's lock file", () => {
  const fx = useAppFixture({ permissions: { maintainer: "write" } });

  async function build(
    files: Record<string, string>,
    script: Parameters<typeof fx.start>[0],
    mirrorPort: number,
    ceiling = `registries,127.0.0.1:${mirrorPort}`,
  ) {
    fx.createRepo({ "README.md": "# Hello\n", ...files });
    await fx.start(script, { BLUEPRINT_SANDBOX: "bwrap", BLUEPRINT_NETWORK_ALLOW: ceiling });
    fx.seedPlan(plan);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    const comments = fx.github.botComments().map((comment) => comment.body);
    return { report: comments.join("\n"), state: stateOf(comments[0]!) };
  }

  it("npm: package-lock.json → `npm ci` through the proxy; S1 uses node_modules with no network, and its first message names the install and `npm test`", async () => {
    const step = `node -e "console.log(require('${npm.packageName}'))" | tee used.txt; ${direct(npm.port)}`;
    const { report, state } = await build(npmProjectFiles(npm), [run(step), complete], npm.port);
    expect(npm.requests).toContain(`/${npm.packageName}/-/${npm.packageName}-1.0.0.tgz`);
    const [first, second] = fx.model.requests;
    expect(firstMessage(first)).toContain(
      "Installed before this step: `npm ci --no-audit --no-fund` (npm, detected from `package-lock.json`) succeeded; they are in node_modules.",
    );
    expect(firstMessage(first)).toContain(
      "The repository's tests: `npm test` (package.json scripts.test: `node --test`).",
    );
    expect(firstMessage(first)).toContain("Your commands have no network at all (`network: none`)");
    // The step itself: the installed package is there, the registry is not.
    expect(lastMessage(second)).toContain("from the registry double");
    expect(lastMessage(second)).toContain("registry: unreachable");
    expect(report).toContain(
      "📦 Dependencies installed by `npm ci --no-audit --no-fund` (npm, detected from `package-lock.json`)",
    );
    expect(state.status).toBe("built");
    // The step's work is committed; node_modules is not.
    expect(fx.repo.show("blueprint/issue-1", "used.txt")).toBe("from the registry double\n");
    expect(() => fx.repo.show("blueprint/issue-1", `node_modules/${npm.packageName}/index.js`)).toThrow();
  });

  it("pip: requirements.txt → a .venv with the package from the index; S1 imports it with no network, and is told `.venv/bin/python -m pytest`", async () => {
    const requirements = `--index-url ${pypi.indexUrl}\n${pypi.project}==1.0.0\n`;
    const step = `.venv/bin/python -c "import blueprint_tiny_py; print(blueprint_tiny_py.GREETING)"; ${direct(pypi.port)}`;
    const { report } = await build(
      { "requirements.txt": requirements, "pytest.ini": "[pytest]\n" },
      [run(step), complete],
      pypi.port,
    );
    expect(pypi.requests).toContain("/files/blueprint_tiny_py-1.0.0-py3-none-any.whl");
    const [first, second] = fx.model.requests;
    expect(firstMessage(first)).toContain(
      "Installed before this step: `python3 -m venv .venv && .venv/bin/python -m pip install --no-input --disable-pip-version-check -r requirements.txt` (pip, detected from `requirements.txt`) succeeded",
    );
    expect(firstMessage(first)).toContain("The repository's tests: `.venv/bin/python -m pytest`");
    expect(lastMessage(second)).toContain("from the pypi double");
    expect(lastMessage(second)).toContain("registry: unreachable");
    expect(report).toContain("📦 Dependencies installed by `python3 -m venv .venv");
  });

  it("a failing install is named in S1's first message, with its output's end, and in the build report; the step is built anyway", async () => {
    // package.json wants a package the lock file does not hold: `npm ci` refuses.
    const { report, state } = await build(npmProjectFiles(npm, false), [complete], npm.port);
    const [first] = fx.model.requests;
    expect(firstMessage(first)).toContain(
      "NOT installed: the setup `npm ci --no-audit --no-fund` (npm, detected from `package-lock.json`) exited 1 before this step.",
    );
    expect(firstMessage(first)).toMatch(/```text\n[\s\S]*npm (error|ERR!)[\s\S]*```/);
    expect(report).toContain(
      "⚠️ **Setup failed:** `npm ci --no-audit --no-fund` (npm, detected from `package-lock.json`) exited 1",
    );
    expect(state.status).toBe("built");
  });

  it("under BLUEPRINT_NETWORK_ALLOW=none a detected install is not run, and S1 is told why", async () => {
    const before = npm.requests.length;
    const { report } = await build(npmProjectFiles(npm), [complete], npm.port, "none");
    expect(npm.requests.length).toBe(before);
    expect(firstMessage(fx.model.requests[0])).toContain(
      "npm (`package-lock.json`): not installed: this App allows no package registry (its BLUEPRINT_NETWORK_ALLOW).",
    );
    expect(report).toContain(
      "⚠️ Dependencies not installed: `npm ci --no-audit --no-fund` (npm, detected from `package-lock.json`) needs a package registry, and this App allows none",
    );
  });

  it("a configured `setup:` gets the registries too, for itself alone: `setup: npm ci` works under the default `network: none`", async () => {
    const config = { ".github/blueprint.yml": "setup: npm ci --no-audit --no-fund --fetch-retries=0\n" };
    const step = `node -e "console.log(require('${npm.packageName}'))" | tee used.txt; ${direct(npm.port)}`;
    const { report } = await build({ ...npmProjectFiles(npm), ...config }, [run(step), complete], npm.port);
    expect(firstMessage(fx.model.requests[0])).toContain(
      "Ran before this step: the setup `npm ci --no-audit --no-fund --fetch-retries=0` (`setup:` in .github/blueprint.yml) succeeded.",
    );
    expect(lastMessage(fx.model.requests[1])).toContain("from the registry double");
    expect(lastMessage(fx.model.requests[1])).toContain("registry: unreachable");
    expect(report).toContain(
      "📦 Setup `npm ci --no-audit --no-fund --fetch-retries=0` (`setup:` in .github/blueprint.yml) ran before the first step.",
    );
  });
});
