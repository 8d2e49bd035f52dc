import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { LIMIT_FLAGS, parseCliArgs } from "../../src/cli/args.js";
import { envSchema } from "../../src/config/env.js";
import { createBareRepo, tempDir } from "../helpers/git-repo.js";
import { assertCliBuilt, blueprint } from "./support.js";

/** What a person meets in the first minutes with the CLI (issue #15, point 4). */
describe("the CLI on first use", () => {
  beforeAll(() => assertCliBuilt());

  it("prints its version with --version and -V", async () => {
    const { version } = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };
    for (const flag of ["--version", "-V"]) {
      const run = await blueprint([flag], { cwd: tempDir() });
      expect(run.code).toBe(0);
      expect(run.stdout.trim()).toBe(`blueprint ${version}`);
    }
  });

  it("lists every limit and time-out of the environment as a flag in --help", async () => {
    const help = await blueprint(["--help"], { cwd: tempDir() });
    const limits = Object.keys(envSchema.shape).filter(
      (name) => /^BLUEPRINT_(MAX_|MODEL_(TIMEOUT|RETRIES))/.test(name) && name !== "BLUEPRINT_MAX_FETCHES",
    );
    expect(limits.length).toBeGreaterThanOrEqual(5);
    for (const name of limits) {
      const [flag, limit] = Object.entries(LIMIT_FLAGS).find(([, limit]) => limit.env === name) ?? [];
      expect(flag, `${name} has a flag`).toBeDefined();
      expect(help.stdout).toContain(`--${flag ?? ""} ${limit?.value ?? ""}`);
      expect(help.stdout).toContain(name);
    }
  });

  it("answers an unknown or incomplete flag in its own words, with a hint, and exit 2", async () => {
    const typo = await blueprint(["plan", "--modle", "x"], { cwd: tempDir() });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("blueprint: unknown option `--modle` (did you mean `--model`?)");
    expect(typo.stderr).toContain("blueprint --help");
    expect(typo.stderr).not.toContain("To specify a positional argument");

    const missing = await blueprint(["plan", "x", "--base-url"], { cwd: tempDir() });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("`--base-url` needs a value, e.g. --base-url http://localhost:11434/v1.");

    const notNumber = await blueprint(["plan", "x", "--max-minutes", "soon"], { cwd: tempDir() });
    expect(notNumber.code).toBe(2);
    expect(notNumber.stderr).toContain("`--max-minutes` needs a whole number above 0, not `soon`");

    const notDollars = await blueprint(["build", "--max-cost", "$5"], { cwd: tempDir() });
    expect(notDollars.code).toBe(2);
    expect(notDollars.stderr).toContain(
      "`--max-cost` needs an amount in dollars above 0, e.g. --max-cost 0.50, not `$5`",
    );
  });

  it("hands limit flags to the engine as the environment variables they stand for", () => {
    const args = parseCliArgs([
      "plan",
      "x",
      "--max-iterations",
      "7",
      "--model-timeout",
      "30",
      "--model-retries",
      "0",
      "--max-cost",
      "0.50",
    ]);
    expect(args.limits).toEqual({
      BLUEPRINT_MAX_ITERATIONS: "7",
      BLUEPRINT_MODEL_TIMEOUT_S: "30",
      BLUEPRINT_MODEL_RETRIES: "0",
      BLUEPRINT_MAX_COST: "0.50",
    });
  });

  it("makes no thread when plan is refused for want of a model endpoint", async () => {
    const repo = createBareRepo({ "README.md": "# Hello\n" });
    const refused = await blueprint(["plan", "add retry"], { cwd: repo.seed });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("no model endpoint");
    expect(existsSync(path.join(repo.seed, ".git", "blueprint", "threads"))).toBe(false);
    const status = await blueprint(["status"], { cwd: repo.seed });
    expect(status.stdout).toContain("No plan yet");
  });

  it("tells a checkout that was never built to run npm run build, instead of a module-not-found crash", () => {
    const checkout = tempDir("blueprint-unbuilt-");
    mkdirSync(path.join(checkout, "bin"));
    copyFileSync("bin/blueprint.js", path.join(checkout, "bin", "blueprint.js"));
    writeFileSync(path.join(checkout, "package.json"), JSON.stringify({ type: "module" }));
    const run = spawnSync(process.execPath, [path.join(checkout, "bin", "blueprint.js"), "--help"], {
      encoding: "utf8",
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("the CLI is not built yet");
    expect(run.stderr).toContain("npm run build");
    expect(run.stderr).not.toContain("ERR_MODULE_NOT_FOUND");
    // The same file still starts the built CLI.
    expect(execFileSync(process.execPath, ["bin/blueprint.js", "--version"], { encoding: "utf8" })).toMatch(
      /^blueprint \d/,
    );
  });
});
