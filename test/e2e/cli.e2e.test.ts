import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "vitest";
import { startModelServer, type ModelServer } from "../helpers/model-server.js";
import { startGitHubDouble, type GitHubDouble } from "./double/github-server.js";
import { PROJECT_ROOT } from "./support/app-process.js";
import { FILES, GREET_JS, greeterScript, INDEX_JS, PLAN, STEP_COMMITS, stepOf } from "./support/greeter-scenario.js";
import { runNode, type NodeRun } from "./support/node-process.js";
import { PATIENCE_MS } from "../helpers/patience.js";

/**
 * The CLI as a person runs it: clone a repository from (a local) GitHub over git's smart HTTP,
 * then `blueprint plan "…"` and `blueprint build` in the checkout, against a scripted model.
 * The CLI works on the checkout alone: it never talks to GitHub and never pushes.
 */

const BIN = path.join(PROJECT_ROOT, "bin", "blueprint.js");
const MODEL_KEY = "sk-e2e-cli-model-key-00000000000000000";
const BRANCH = "blueprint/issue-1";

describe("the blueprint CLI, run as `node bin/blueprint.js` in a checkout cloned from a local GitHub", () => {
  let github: GitHubDouble;
  let model: ModelServer;
  /** HOME, BLUEPRINT_WORKDIR and the checkout live here. */
  let root: string;
  let checkout: string;
  let baseSha: string;
  const runs: Array<{ args: string[]; run: NodeRun }> = [];

  /** A person's shell: their own HOME with no git identity, nothing inherited from the test runner but PATH. */
  const shell = () => ({
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: path.join(root, "home"),
    GIT_CONFIG_NOSYSTEM: "1",
    LANG: "C.UTF-8",
  });
  const gitOptions = (cwd: string) => ({
    cwd,
    env: { ...shell(), GIT_TERMINAL_PROMPT: "0" },
    encoding: "utf8" as const,
  });
  /** git on the checkout alone. */
  const git = (cwd: string, args: string[]) =>
    execFileSync("git", args, { ...gitOptions(cwd), stdio: ["ignore", "pipe", "pipe"] });
  /** git that talks to the double, which answers from this very process: never block its event loop. */
  const gitRemote = (cwd: string, args: string[]) =>
    promisify(execFile)("git", args, { ...gitOptions(cwd), timeout: PATIENCE_MS });

  async function blueprint(args: string[], env: Record<string, string> = {}): Promise<NodeRun> {
    const run = await runNode([BIN, ...args], {
      cwd: checkout,
      env: { ...shell(), BLUEPRINT_WORKDIR: path.join(root, "work"), BLUEPRINT_MODEL_RETRIES: "0", ...env },
    });
    runs.push({ args, run });
    return run;
  }
  const modelEnv = () => ({ OPENAI_BASE_URL: model.url, OPENAI_API_KEY: MODEL_KEY, BLUEPRINT_MODEL: "e2e-model" });

  beforeAll(async () => {
    if (!existsSync(path.join(PROJECT_ROOT, "lib", "cli.js")))
      throw new Error(
        "lib/cli.js is missing: bin/blueprint.js runs the compiled CLI. Run `npm run build` first (`npm test` does).",
      );
    github = await startGitHubDouble({ files: FILES });
    baseSha = github.repository.head("main") ?? "";
    model = await startModelServer(greeterScript());
    root = mkdtempSync(path.join(os.tmpdir(), "blueprint-e2e-cli-"));
    for (const dir of ["home", "work"]) mkdirSync(path.join(root, dir));
    checkout = path.join(root, "hello-world");
  });

  afterAll(async () => {
    await model?.close();
    await github?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const diagnostics = () =>
    [
      "--- requests the GitHub double saw ---",
      ...github.requests.map((r) => `${r.status} ${r.kind} ${r.method} ${r.path} (${r.auth})`),
      ...runs.flatMap(({ args, run }) => [
        `--- blueprint ${args.join(" ")}: exit ${run.code}, stdout ---`,
        run.stdout.slice(-4000),
        "--- stderr ---",
        run.stderr.slice(-4000),
      ]),
    ].join("\n");

  it("clones the repository over smart HTTP with a token (and not without one)", async () => {
    onTestFailed(() => console.error(diagnostics()));
    await expect(gitRemote(root, ["clone", "--quiet", github.cloneUrl, path.join(root, "anonymous")])).rejects.toThrow(
      /Authentication failed|could not read Username/,
    );

    const basic = Buffer.from(`x-access-token:${github.issueInstallationToken()}`).toString("base64");
    // -c: the header is used for this clone only and not written to the checkout's config.
    await gitRemote(root, [
      "-c",
      `http.extraHeader=Authorization: Basic ${basic}`,
      "clone",
      "--quiet",
      github.cloneUrl,
      checkout,
    ]);
    expect(git(checkout, ["rev-parse", "HEAD"]).trim()).toBe(baseSha);
    expect(git(checkout, ["symbolic-ref", "--short", "HEAD"]).trim()).toBe("main");
    expect(git(checkout, ["config", "--list", "--local"])).not.toContain(basic);
  });

  it("plan: explores the committed code and prints the plan, as text and (status --markdown) as the App's markdown", async () => {
    onTestFailed(() => console.error(diagnostics()));
    const planned = await blueprint(["plan", "greet people by name"], modelEnv());

    expect(planned.code).toBe(0);
    expect(planned.stderr).toContain("Planning…");
    expect(planned.stdout).toContain(`Plan v1: ${PLAN.title}`);
    expect(planned.stdout).toContain("[ ] S1  Add a greet helper");
    expect(planned.stdout).toContain("[ ] S2  Greet by name in the entry point");
    expect(planned.stdout).toContain("Next: blueprint build");
    expect(planned.stdout).not.toContain("<!--");
    // The model got the instructions and the repository's real file, and no write tools.
    expect(model.requests.every((request) => request.model === "e2e-model")).toBe(true);
    expect(JSON.stringify(model.requests[0]?.messages)).toContain("greet people by name");
    expect(JSON.stringify(model.requests.at(-1)?.messages)).toContain("Hello, world!");
    expect(model.requests[0]?.tools?.map((tool) => tool.function.name)).not.toContain("write_file");
    // Planning changed nothing in the checkout.
    expect(git(checkout, ["status", "--porcelain"])).toBe("");
    expect(git(checkout, ["branch", "--list", BRANCH])).toBe("");

    const status = await blueprint(["status", "--markdown"]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain("Plan v1");
    expect(status.stdout).toContain("- [ ] **S1** Add a greet helper");
    expect(status.stdout).toContain("<!-- blueprint:state");
  });

  it("build (model from flags): a new local branch with one commit per step; the checkout and GitHub untouched", async () => {
    onTestFailed(() => console.error(diagnostics()));
    const built = await blueprint(["build", "--base-url", model.url, "--api-key", MODEL_KEY, "--model", "e2e-model"]);

    expect(built.code).toBe(0);
    expect(
      git(checkout, ["log", "--format=%s", `main..${BRANCH}`])
        .trim()
        .split("\n"),
    ).toEqual(STEP_COMMITS);
    expect(git(checkout, ["show", `${BRANCH}:src/greet.js`])).toBe(GREET_JS);
    expect(git(checkout, ["show", `${BRANCH}:src/index.js`])).toBe(INDEX_JS);
    // Commits carry Blueprint's own identity: this HOME has no git identity at all.
    expect(git(checkout, ["log", "-1", "--format=%an", BRANCH]).trim()).toBe("blueprint[bot]");
    expect(git(checkout, ["symbolic-ref", "--short", "HEAD"]).trim()).toBe("main");
    expect(git(checkout, ["rev-parse", "main"]).trim()).toBe(baseSha);
    expect(git(checkout, ["status", "--porcelain"])).toBe("");
    expect(model.requests.map(stepOf).filter(Boolean)).toEqual(["S1", "S1", "S2", "S2"]);
    expect(built.stderr).toMatch(/✓ S1 Add a greet helper[\s\S]*✓ S2 Greet by name in the entry point/);
    expect(built.stdout).toContain(`Status: built on branch ${BRANCH}`);
    expect(built.stdout).toMatch(/\[x\] S2 {2}Greet by name in the entry point/);

    // Nothing was pushed: the branch exists only locally.
    expect(github.repository.head(BRANCH)).toBeNull();
    expect(github.repository.head("main")).toBe(baseSha);
    expect(github.requests.filter((r) => r.gitService === "git-receive-pack")).toEqual([]);
  });

  it("--help exits 0 with the usage; a bad invocation exits 2 and says what is wrong", async () => {
    onTestFailed(() => console.error(diagnostics()));
    const help = await blueprint(["--help"]);
    expect(help.code).toBe(0);
    for (const text of ["Usage:", 'blueprint plan "instructions"', "blueprint build", "--base-url", "OPENAI_API_KEY"])
      expect(help.stdout).toContain(text);
    expect(help.stderr).toBe("");

    const unknown = await blueprint(["frobnicate"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toContain("blueprint: unknown command `frobnicate`.");
    expect(unknown.stderr).toContain("Run `blueprint --help` for usage.");

    const misplaced = await blueprint(["build", "--new"]);
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toContain("--new only goes with `blueprint plan`.");
  });

  it("asked GitHub for nothing but the clone, with the token", () => {
    onTestFailed(() => console.error(diagnostics()));
    expect(github.violations).toEqual([]);
    expect(github.requests.filter((r) => r.kind !== "git").map((r) => `${r.method} ${r.path}`)).toEqual([]);
    const clones = github.requests.filter((r) => r.kind === "git");
    expect(clones.filter((r) => r.status === 401).length).toBeGreaterThan(0);
    expect(
      clones
        .filter((r) => r.status !== 401)
        .every((r) => r.auth === "installation-token" && r.gitService === "git-upload-pack" && r.status === 200),
    ).toBe(true);
  });
});
