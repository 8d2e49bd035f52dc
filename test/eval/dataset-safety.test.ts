import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { chooseItems } from "../../eval/items.js";
import type { Judge } from "../../eval/judge.js";
import { main } from "../../eval/main.js";
import { evalSandbox } from "../../eval/sandbox.js";
import * as realJudge from "../../eval/swe/index.js";
import { gitIn, tempDir } from "../helpers/git-repo.js";
import { pathWithout } from "../helpers/no-bubblewrap.js";
import {
  npmProjectFiles,
  startLoopbackService,
  startRegistryDouble,
  type RegistryDouble,
} from "../helpers/registry-double.js";
import { scriptedJudge } from "./scripted-judge.js";
import { tinyRepos } from "./tiny-repo.js";

// Issue #40, point 7: the eval runs a dataset's code (its `install`, a package's lifecycle scripts, its
// tests) in bubblewrap, the install with the registries alone through its own proxy; it refuses rather
// than run them plainly when BLUEPRINT_SANDBOX=bwrap cannot be had, refuses a dataset's own commands
// unless told to trust them, and validates without the issues' texts. Real bubblewrap and npm; the
// registry is a double on 127.0.0.1, named in BLUEPRINT_NETWORK_ALLOW as an operator's mirror.

const FIXTURE = path.resolve("test/fixtures/eval/tiny-math.jsonl");
const DRIVER = path.resolve("test/eval/install-driver.ts");
const SECRET = "sk-eval-secret-0f3a9c";
const run = promisify(execFile);

/**
 * What a hostile install tries: the eval's environment (its own, or its parents' through /proc), the real HOME, a
 * direct connection.
 */
function probeScript(realHome: string, port: number): string {
  return [
    `echo "environ: $(cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c '${SECRET}')"`,
    'echo "env: ${OPENAI_API_KEY-}"',
    'echo "home: $HOME"',
    'echo pwned > "$HOME/pwned.txt"',
    `echo pwned > '${realHome}/pwned-by-path.txt'`,
    `(exec 3<>/dev/tcp/127.0.0.1/${port} && echo "direct: reached") 2>/dev/null || echo "direct: refused"`,
    "",
  ].join("\n");
}

describe("a dataset's install", () => {
  let registry: RegistryDouble;
  beforeAll(async () => {
    registry = await startRegistryDouble();
  });
  afterAll(() => registry.close());

  it("sees neither the eval's OPENAI_API_KEY nor its HOME, installs from the registry through the proxy, and connects nowhere directly", async () => {
    const service = await startLoopbackService();
    try {
      const realHome = tempDir("eval-real-home-");
      const project = tempDir("eval-install-");
      const files = npmProjectFiles(registry);
      // The package's own lifecycle script probes too, as a dependency's would.
      const manifest = { ...(JSON.parse(files["package.json"] ?? "{}") as { scripts: Record<string, string> }) };
      manifest.scripts = { ...manifest.scripts, preinstall: "sh probe.sh > preinstall.txt 2>&1" };
      for (const [file, text] of Object.entries({
        ...files,
        "package.json": JSON.stringify(manifest),
        "probe.sh": probeScript(realHome, service.port),
      }))
        writeFileSync(path.join(project, file), text);
      const env = {
        PATH: process.env.PATH ?? "",
        HOME: realHome,
        OPENAI_API_KEY: SECRET,
        BLUEPRINT_SANDBOX: "bwrap",
        BLUEPRINT_NETWORK_ALLOW: `registries,127.0.0.1:${registry.port}`,
      };
      const install = "sh probe.sh > install.txt 2>&1; npm ci --no-audit --no-fund";
      const { stdout } = await run(process.execPath, ["--import", "tsx", DRIVER, project, install], { env });
      const result = JSON.parse(stdout) as { ok: boolean; log: string };

      expect(result.ok, result.log).toBe(true);
      for (const probe of ["install.txt", "preinstall.txt"]) {
        const seen = readFileSync(path.join(project, probe), "utf8");
        expect(seen).toContain("environ: 0\n");
        expect(seen).toContain("env: \n");
        expect(seen).toContain("home: /tmp/home\n");
        expect(seen).toContain("direct: refused\n");
        expect(seen).not.toContain(SECRET);
      }
      expect(existsSync(path.join(realHome, "pwned.txt"))).toBe(false);
      expect(existsSync(path.join(realHome, "pwned-by-path.txt"))).toBe(false);
      expect(service.connections()).toBe(0);
      // npm reached the registry double through the install's proxy.
      expect(readFileSync(path.join(project, "node_modules", registry.packageName, "index.js"), "utf8")).toContain(
        "from the registry double",
      );
      expect(registry.requests).toContain(`/${registry.packageName}/-/${registry.packageName}-1.0.0.tgz`);
      expect(result.log).toContain("in bubblewrap");
    } finally {
      await service.close();
    }
  });
});

describe("where the eval runs installs and tests (BLUEPRINT_SANDBOX)", () => {
  const savedPath = process.env.PATH;
  afterEach(() => {
    process.env.PATH = savedPath;
  });

  it("runs a task's tests inside bubblewrap: a private HOME, and nothing written outside the tree", async () => {
    const outside = tempDir("eval-tests-outside-");
    const repos = tinyRepos();
    const [tiny] = realJudge.loadInstances(FIXTURE);
    if (!tiny) throw new Error("fixture empty");
    const dir = path.join(tempDir("eval-tests-"), "repo");
    await realJudge.checkoutInstance(tiny, { reposDir: repos }, dir);
    const probe = `echo "$HOME" > home.txt; echo escaped > '${outside}/escaped.txt'; ${tiny.test_cmd ?? ""}`;
    const report = await realJudge.judgeInstance({ ...tiny, test_cmd: probe }, dir, {
      timeoutMs: 60_000,
      sandbox: evalSandbox({ BLUEPRINT_SANDBOX: "bwrap" }, () => {}),
    });
    expect(report.error).toBeUndefined();
    expect(report.statuses).toMatchObject({ "sums numbers": "passed" });
    expect(readFileSync(path.join(dir, "home.txt"), "utf8")).toBe("/tmp/home\n");
    expect(existsSync(path.join(outside, "escaped.txt"))).toBe(false);
  });

  it.each(["broken", "missing"] as const)(
    "BLUEPRINT_SANDBOX=bwrap with bubblewrap %s: refuses before any install or test, saying why and what to do",
    async (kind) => {
      process.env.PATH = pathWithout(kind, ["git", "sh"]);
      const calls: string[] = [];
      const stderr: string[] = [];
      const argv = ["--dataset", FIXTURE, "--repos", tinyRepos(), "--trust-dataset-commands", "--validate"];
      const { exitCode } = await main(
        argv,
        { BLUEPRINT_SANDBOX: "bwrap" },
        { stdout: () => {}, stderr: (text) => stderr.push(text) },
        { judge: scriptedJudge(calls) },
      );
      expect(exitCode).toBe(2);
      expect(calls).toEqual([]);
      expect(stderr.join("\n")).toMatch(
        /^eval: BLUEPRINT_SANDBOX=bwrap: no task was run, because the eval runs each task's install, tests and checks .* only inside bubblewrap, and .*(not installed|cannot build the sandbox here).*set BLUEPRINT_SANDBOX=none/,
      );
    },
  );

  it("auto without a working bubblewrap says that it runs them plainly", () => {
    process.env.PATH = pathWithout("broken");
    const notes: string[] = [];
    expect(evalSandbox({}, (text) => notes.push(text)).bwrap).toBeNull();
    expect(notes.join("\n")).toMatch(/bubblewrap cannot build the sandbox here .*fall back to the plain runner/);
    expect(() => evalSandbox({ BLUEPRINT_SANDBOX: "sometimes" }, () => {})).toThrow(
      'BLUEPRINT_SANDBOX is auto, bwrap or none, not "sometimes".',
    );
  });
});

describe("a dataset's own commands (install, test_cmd)", () => {
  it("are refused without --trust-dataset-commands, naming the flag and the instances; nothing is checked out", async () => {
    const calls: string[] = [];
    const stderr: string[] = [];
    const { exitCode } = await main(
      ["--dataset", FIXTURE, "--repos", tinyRepos(), "--validate"],
      {},
      { stdout: () => {}, stderr: (text) => stderr.push(text) },
      { judge: scriptedJudge(calls) },
    );
    expect(exitCode).toBe(2);
    expect(calls).toEqual([]);
    expect(stderr.join("\n")).toContain(
      `${FIXTURE}: blueprint-eval__tiny-math-1, blueprint-eval__tiny-math-broken carry their own install or test_cmd`,
    );
    expect(stderr.join("\n")).toContain("give --trust-dataset-commands to run them");
  });

  it("a dataset without them needs no flag, the shipped real suite's test_cmd none either, and the flag is only for --dataset", async () => {
    const plain = path.join(tempDir("eval-plain-dataset-"), "plain.jsonl");
    const lines = readFileSync(FIXTURE, "utf8").trim().split("\n");
    writeFileSync(
      plain,
      `${lines.map((line) => JSON.stringify({ ...(JSON.parse(line) as object), install: undefined, test_cmd: undefined })).join("\n")}\n`,
    );
    const judge = scriptedJudge();
    const items = await chooseItems({ dataset: plain, reposDir: "/repos" }, undefined, {
      smokeDir: "/unused",
      judge: () => judge,
    });
    expect(items.map((item) => item.id)).toEqual(["blueprint-eval__tiny-math-1", "blueprint-eval__tiny-math-broken"]);
    const [tiny] = judge.loadInstances(FIXTURE);
    if (!tiny?.test_cmd) throw new Error("fixture without test_cmd");
    const real: Judge = { ...judge, loadRealSuite: () => [{ ...tiny, source: { reposDir: "/repos" } }] };
    expect(await chooseItems({ suite: "real" }, undefined, { smokeDir: "/unused", judge: () => real })).toHaveLength(1);
    const stderr: string[] = [];
    expect(
      (
        await main(
          ["--suite", "smoke", "--trust-dataset-commands"],
          {},
          { stdout: () => {}, stderr: (text) => stderr.push(text) },
        )
      ).exitCode,
    ).toBe(2);
    expect(stderr.join("\n")).toContain("--trust-dataset-commands is for --dataset");
  });
});

describe("--validate on the real suite", () => {
  it("works offline: it never asks for an issue's text", async () => {
    const { root, reposDir } = realSuiteFixture();
    const asked: string[] = [];
    const offline = async (repo: string, issue: number): Promise<never> => {
      asked.push(`${repo}#${issue}`);
      throw new Error("getaddrinfo ENOTFOUND api.github.com");
    };
    const judge: Judge = {
      ...realJudge,
      loadRealSuite: (options) =>
        realJudge.loadRealSuite({ ...options, cacheDir: tempDir("eval-empty-cache-"), fetchIssue: offline }),
    };
    const stdout: string[] = [];
    const stderr: string[] = [];
    const { exitCode } = await main(
      ["--validate", "--repos", reposDir],
      {},
      { stdout: (text) => stdout.push(text), stderr: (text) => stderr.push(text) },
      { realRoot: root, judge },
    );
    expect(stderr.join("\n")).not.toContain("could not load the text");
    expect(asked).toEqual([]);
    expect(stdout.join("\n")).toMatch(/\| example__sum-7 \| yes \| – \|/);
    expect(exitCode).toBe(0);
  });
});

/**
 * A real suite of one task (a subtraction where an addition belongs, fixed with a test), and its repository as
 * `--repos` holds it.
 */
function realSuiteFixture(): { root: string; reposDir: string } {
  const reposDir = tempDir("eval-real-repos-");
  const upstream = path.join(reposDir, "example__sum");
  const write = (file: string, text: string) => {
    mkdirSync(path.dirname(path.join(upstream, file)), { recursive: true });
    writeFileSync(path.join(upstream, file), text);
  };
  const head = `const { describe, it } = require("node:test");\nconst assert = require("node:assert");\nconst sum = require("../index.js");\n`;
  mkdirSync(upstream);
  gitIn(upstream, ["init", "-q", "-b", "main"]);
  write("package.json", JSON.stringify({ name: "sum", version: "1.0.0" }));
  write("index.js", "module.exports = (a, b) => a - b;\n");
  write(
    "test/sum.test.js",
    `${head}describe("sum", () => {\n  it("keeps zero", () => assert.equal(sum(0, 0), 0));\n});\n`,
  );
  gitIn(upstream, ["add", "-A"]);
  gitIn(upstream, ["commit", "-q", "-m", "base"]);
  const base = gitIn(upstream, ["rev-parse", "HEAD"]).trim();
  write("index.js", "module.exports = (a, b) => a + b;\n");
  write(
    "test/sum.test.js",
    `${head}describe("sum", () => {\n  it("keeps zero", () => assert.equal(sum(0, 0), 0));\n  it("adds two numbers", () => assert.equal(sum(2, 3), 5));\n});\n`,
  );
  gitIn(upstream, ["add", "-A"]);
  gitIn(upstream, ["commit", "-q", "-m", "add, do not subtract (fixes #7)"]);
  const fix = gitIn(upstream, ["rev-parse", "HEAD"]).trim();
  const root = tempDir("eval-real-suites-");
  mkdirSync(path.join(root, "example__sum"));
  const task = {
    instance_id: "example__sum-7",
    base_commit: base,
    fix_commit: fix,
    issue: 7,
    test_paths: ["test/"],
    test_cmd: "node --test --test-reporter=tap test/",
    test_runner: "node-test",
    FAIL_TO_PASS: ["sum > adds two numbers"],
    PASS_TO_PASS: ["sum > keeps zero"],
  };
  writeFileSync(
    path.join(root, "example__sum", "suite.json"),
    JSON.stringify({ repo: "example/sum", license: "MIT", tasks: [task] }),
  );
  return { root, reposDir };
}
