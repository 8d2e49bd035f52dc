import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkoutInstance,
  filesOfPatch,
  judgeInstance,
  loadInstances,
  parseInstances,
  parseTestLog,
  validateInstance,
  applyPatch,
  type SweInstance,
} from "../../eval/swe/index.js";

// A tiny repository whose "issue" is a subtraction where an addition belongs: node:test, no dependencies.
const temp = mkdtempSync(path.join(os.tmpdir(), "swe-judge-"));
const upstream = path.join(temp, "upstream");
const F2P = "sum > adds two numbers";
const P2P = "sum > keeps zero";
let base: SweInstance;
let bundle: string;
let fixCommit: string;

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
  });
}

function write(dir: string, file: string, text: string): void {
  mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  writeFileSync(path.join(dir, file), text);
}

const TEST_HEAD = `const { describe, it } = require("node:test");\nconst assert = require("node:assert");\nconst sum = require("../lib/sum.js");\n`;

beforeAll(() => {
  mkdirSync(upstream);
  git(upstream, "init", "-q", "-b", "main");
  git(upstream, "config", "user.name", "Upstream");
  git(upstream, "config", "user.email", "upstream@example.invalid");
  write(
    upstream,
    "package.json",
    JSON.stringify({ name: "tiny-sum", version: "1.0.0", scripts: { test: "node --test" } }),
  );
  write(upstream, "lib/sum.js", "module.exports = (a, b) => a - b;\n");
  write(
    upstream,
    "test/sum.test.js",
    `${TEST_HEAD}describe("sum", () => {\n  it("keeps zero", () => assert.equal(sum(0, 0), 0));\n});\n`,
  );
  git(upstream, "add", "-A");
  git(upstream, "commit", "-q", "-m", "tiny-sum");
  const baseCommit = git(upstream, "rev-parse", "HEAD").trim();
  write(upstream, "lib/sum.js", "module.exports = (a, b) => a + b;\n");
  write(
    upstream,
    "test/sum.test.js",
    `${TEST_HEAD}describe("sum", () => {\n  it("keeps zero", () => assert.equal(sum(0, 0), 0));\n  it("adds two numbers", () => assert.equal(sum(2, 3), 5));\n});\n`,
  );
  git(upstream, "add", "-A");
  git(upstream, "commit", "-q", "-m", "fix: add, do not subtract");
  fixCommit = git(upstream, "rev-parse", "HEAD").trim();
  bundle = path.join(temp, "tiny-sum.bundle");
  git(upstream, "bundle", "create", "-q", bundle, "--all");
  base = {
    instance_id: "tiny-sum-1",
    repo: "example/tiny-sum",
    base_commit: baseCommit,
    problem_statement: "sum(2, 3) returns -1",
    patch: git(upstream, "diff", baseCommit, fixCommit, "--", "lib"),
    test_patch: git(upstream, "diff", baseCommit, fixCommit, "--", "test"),
    FAIL_TO_PASS: [F2P],
    PASS_TO_PASS: [P2P],
    install: "true",
    test_cmd: "node --test --test-reporter=tap test/sum.test.js",
    test_runner: "node-test",
  };
});

afterAll(() => rmSync(temp, { recursive: true, force: true }));

let checkouts = 0;
async function checkout(inst: SweInstance = base): Promise<string> {
  const dir = path.join(temp, `work-${checkouts++}`);
  await checkoutInstance(inst, { bundle }, dir);
  return dir;
}

const opts = { timeoutMs: 60_000 };

describe("checkoutInstance", () => {
  it("gives a tree at base_commit whose repository holds no later commit, no remote, and its own identity", async () => {
    const dir = await checkout();
    expect(git(dir, "rev-parse", "HEAD").trim()).toBe(base.base_commit);
    expect(readFileSync(path.join(dir, "lib/sum.js"), "utf8")).toContain("a - b");
    expect(() => git(dir, "cat-file", "-e", `${fixCommit}^{commit}`)).toThrow();
    expect(git(dir, "remote").trim()).toBe("");
    expect(git(dir, "config", "user.email").trim()).toBe("eval@blueprint.invalid");
  });

  it("commits lockfile_patch on top, and reads a folder of repositories as well as a bundle", async () => {
    const lock = `diff --git a/package-lock.json b/package-lock.json\nnew file mode 100644\n--- /dev/null\n+++ b/package-lock.json\n@@ -0,0 +1 @@\n+{"lockfileVersion":3}\n`;
    const reposDir = path.join(temp, "repos");
    mkdirSync(path.join(reposDir, "example"), { recursive: true });
    git(temp, "clone", "-q", "--bare", upstream, path.join(reposDir, "example", "tiny-sum"));
    const dir = path.join(temp, "from-repos-dir");
    await checkoutInstance({ ...base, lockfile_patch: lock }, { reposDir }, dir);
    expect(git(dir, "rev-parse", "HEAD~1").trim()).toBe(base.base_commit);
    expect(git(dir, "status", "--porcelain").trim()).toBe("");
    expect(readFileSync(path.join(dir, "package-lock.json"), "utf8").trim()).toBe('{"lockfileVersion":3}');
    await expect(
      checkoutInstance({ ...base, repo: "example/missing" }, { reposDir }, path.join(temp, "nowhere")),
    ).rejects.toThrow(/no repository for example\/missing under/);
  });
});

describe("judgeInstance", () => {
  it("does not resolve the untouched tree: the FAIL_TO_PASS test fails, the PASS_TO_PASS test passes", async () => {
    const report = await judgeInstance(base, await checkout(), opts);
    expect(report.error).toBeUndefined();
    expect(report.resolved).toBe(false);
    expect(report.FAIL_TO_PASS).toEqual({ success: [], failure: [F2P] });
    expect(report.PASS_TO_PASS).toEqual({ success: [P2P], failure: [] });
  });

  it("resolves a tree with the gold patch", async () => {
    const dir = await checkout();
    await applyPatch(dir, base.patch ?? "", "gold patch");
    const report = await judgeInstance(base, dir, opts);
    expect(report).toMatchObject({
      resolved: true,
      FAIL_TO_PASS: { success: [F2P], failure: [] },
      PASS_TO_PASS: { success: [P2P], failure: [] },
    });
    expect(report.statuses).toEqual({ [F2P]: "passed", [P2P]: "passed" });
  });

  it("does not resolve a change that fixes the issue but breaks a PASS_TO_PASS test", async () => {
    const dir = await checkout();
    write(dir, "lib/sum.js", "module.exports = (a, b) => (a === 0 && b === 0 ? 1 : a + b);\n");
    const report = await judgeInstance(base, dir, opts);
    expect(report).toMatchObject({
      resolved: false,
      FAIL_TO_PASS: { success: [F2P], failure: [] },
      PASS_TO_PASS: { success: [], failure: [P2P] },
    });
  });

  it("judges with the repository's tests, not the agent's edits to them", async () => {
    const dir = await checkout();
    write(
      dir,
      "test/sum.test.js",
      `${TEST_HEAD}describe("sum", () => {\n  it("keeps zero", () => {});\n  it("adds two numbers", () => {});\n});\n`,
    );
    const report = await judgeInstance(base, dir, opts);
    expect(report.FAIL_TO_PASS.failure).toEqual([F2P]);
    expect(report.resolved).toBe(false);
  });

  it("counts a listed test that never ran as a failure", async () => {
    const dir = await checkout();
    await applyPatch(dir, base.patch ?? "", "gold patch");
    const report = await judgeInstance({ ...base, FAIL_TO_PASS: [F2P, "sum > was renamed"] }, dir, opts);
    expect(report).toMatchObject({ resolved: false, FAIL_TO_PASS: { success: [F2P], failure: ["sum > was renamed"] } });
  });

  it("reports why when the tests cannot be judged (a test command that prints no results)", async () => {
    const report = await judgeInstance({ ...base, test_cmd: "echo nothing to see" }, await checkout(), opts);
    expect(report.resolved).toBe(false);
    expect(report.error).toMatch(/no TAP results/);
    expect(report.FAIL_TO_PASS.failure).toEqual([F2P]);
    expect(report.PASS_TO_PASS.failure).toEqual([P2P]);
  });
  it("stops tests that run past the time limit, or when asked to, and says so", async () => {
    const slow = { ...base, test_cmd: "sleep 20" };
    const timedOut = await judgeInstance(slow, await checkout(), { timeoutMs: 1_000 });
    expect(timedOut).toMatchObject({ resolved: false, error: "the tests timed out after 1000 ms" });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const stopped = await judgeInstance(slow, await checkout(), { timeoutMs: 60_000, signal: controller.signal });
    expect(stopped).toMatchObject({ resolved: false, error: "the tests stopped" });
  });
});

describe("validateInstance", () => {
  it("accepts a sound instance", async () => {
    const result = await validateInstance(base, { bundle }, opts);
    expect(result.problems).toEqual([]);
    expect(result.ok).toBe(true);
  });

  it("rejects an instance whose FAIL_TO_PASS test already passes before the gold patch", async () => {
    const result = await validateInstance({ ...base, FAIL_TO_PASS: [F2P, P2P], PASS_TO_PASS: [] }, { bundle }, opts);
    expect(result.ok).toBe(false);
    expect(result.problems).toEqual([`FAIL_TO_PASS test passes without the gold patch: ${P2P}`]);
  });

  it("rejects an instance whose PASS_TO_PASS test fails", async () => {
    const result = await validateInstance({ ...base, PASS_TO_PASS: [P2P, F2P] }, { bundle }, opts);
    expect(result.ok).toBe(false);
    expect(result.problems).toEqual([`PASS_TO_PASS test does not pass without the gold patch: ${F2P}`]);
  });

  it("rejects an instance whose gold patch does not make its tests pass, and one without a gold patch", async () => {
    const wrongGold = (base.patch ?? "").replace(
      "+module.exports = (a, b) => a + b;",
      "+module.exports = (a, b) => a * b;",
    );
    const result = await validateInstance({ ...base, patch: wrongGold }, { bundle }, opts);
    expect(result.problems).toEqual([`FAIL_TO_PASS test does not pass with the gold patch: ${F2P}`]);
    const { patch: _gold, ...withoutGold } = base;
    expect((await validateInstance(withoutGold, { bundle }, opts)).problems).toEqual(["tiny-sum-1 has no gold patch"]);
  });
});

describe("parseInstances", () => {
  const good = {
    instance_id: "a-1",
    repo: "owner/name",
    base_commit: "0123456789abcdef0123456789abcdef01234567",
    problem_statement: "it breaks",
    test_patch: "diff --git a/t b/t",
    FAIL_TO_PASS: JSON.stringify(["t > one"]),
    PASS_TO_PASS: [],
  };

  it("reads SWE-bench lines, where the test lists are JSON-encoded strings, and keeps unknown fields", () => {
    const [inst] = parseInstances(`${JSON.stringify({ ...good, environment_setup_commit: "x" })}\n\n`);
    expect(inst?.FAIL_TO_PASS).toEqual(["t > one"]);
    expect(inst?.PASS_TO_PASS).toEqual([]);
    expect(inst).toMatchObject({ environment_setup_commit: "x" });
  });

  it("names every bad line with its number and what is wrong", () => {
    const lines = [
      JSON.stringify(good),
      "{not json",
      JSON.stringify({ ...good, instance_id: "a-2", base_commit: "main" }),
      JSON.stringify({ ...good, instance_id: "a-3", FAIL_TO_PASS: "[1, 2" }),
      JSON.stringify({ ...good, problem_statement: undefined, instance_id: "a-4" }),
      JSON.stringify(good),
    ].join("\n");
    let message = "";
    try {
      parseInstances(lines, "tasks.jsonl");
    } catch (error) {
      message = error instanceof Error ? error.message : String(error);
    }
    expect(message.split("\n")).toEqual([
      "5 bad instance lines:",
      expect.stringMatching(/^tasks\.jsonl:2: not JSON \(/),
      "tasks.jsonl:3 (a-2): base_commit: expected a 40-hex commit id",
      "tasks.jsonl:4 (a-3): FAIL_TO_PASS: expected a list of test ids, or a JSON string holding one",
      expect.stringMatching(/^tasks\.jsonl:5 \(a-4\): problem_statement: /),
      "tasks.jsonl:6: instance_id a-1 is already used on line 1",
    ]);
  });

  it("reads a JSONL file in SWE-bench's own shape (lists as JSON strings, no extensions but the test command) that then judges like any instance", async () => {
    const file = path.join(temp, "tasks.jsonl");
    const { patch: _gold, install: _install, ...plain } = base;
    writeFileSync(
      file,
      `${JSON.stringify({ ...plain, FAIL_TO_PASS: JSON.stringify([F2P]), PASS_TO_PASS: JSON.stringify([P2P]), version: "1.0" })}\n`,
    );
    const [inst] = loadInstances(file);
    if (!inst) throw new Error("no instance read");
    const dir = path.join(temp, "from-jsonl");
    await checkoutInstance(inst, { bundle }, dir);
    expect(await judgeInstance(inst, dir, opts)).toMatchObject({
      resolved: false,
      FAIL_TO_PASS: { failure: [F2P] },
      PASS_TO_PASS: { success: [P2P] },
    });
  });

  it("refuses an empty file", () => {
    expect(() => parseInstances("\n", "empty.jsonl")).toThrow("empty.jsonl: no instances");
  });
});

describe("parseTestLog", () => {
  it("reads mocha's JSON after whatever the tests printed, with the file when mocha gives it", () => {
    const report = {
      stats: {},
      passes: [
        { title: "b", fullTitle: "a b", file: "/r/test/x.js" },
        { title: "c", fullTitle: "a c" },
      ],
      failures: [{ title: "d", fullTitle: "a d", file: "/r/test/x.js" }],
      pending: [{ title: "e", fullTitle: "a e" }],
    };
    const results = parseTestLog("mocha", `log line {\n${JSON.stringify(report, null, 2)}\n`, "/r");
    expect(Object.fromEntries(results)).toEqual({
      "test/x.js > a b": "passed",
      "a c": "passed",
      "test/x.js > a d": "failed",
      "a e": "skipped",
    });
  });

  it("reads jest and vitest JSON, suites joined with ' > ', and a title reported twice is failed if either failed", () => {
    const report = {
      testResults: [
        {
          name: "/r/src/a.test.ts",
          assertionResults: [
            { ancestorTitles: ["outer", "inner"], title: "works", status: "passed" },
            { ancestorTitles: [], title: "twice", status: "failed" },
            { ancestorTitles: [], title: "twice", status: "passed" },
            { ancestorTitles: [], title: "later", status: "todo" },
          ],
        },
      ],
    };
    expect(Object.fromEntries(parseTestLog("vitest", JSON.stringify(report), "/r"))).toEqual({
      "src/a.test.ts > outer > inner > works": "passed",
      "src/a.test.ts > twice": "failed",
      "src/a.test.ts > later": "skipped",
    });
  });

  it("reads node:test TAP: leaves only, nested names, escaped '#', skips", () => {
    const tap = [
      "TAP version 13",
      "# Subtest: suite",
      "    # Subtest: adds",
      "    ok 1 - adds",
      "      ---",
      "      ...",
      "    # Subtest: inner",
      "        # Subtest: fails \\# hash",
      "        not ok 1 - fails \\# hash",
      "    not ok 2 - inner",
      "not ok 1 - suite",
      "# Subtest: skipped",
      "ok 2 - skipped # SKIP",
      "# noise ok 3 - fake",
      "1..2",
    ].join("\n");
    expect(Object.fromEntries(parseTestLog("node-test", tap, "/r"))).toEqual({
      "suite > adds": "passed",
      "suite > inner > fails # hash": "failed",
      skipped: "skipped",
    });
  });
});

describe("filesOfPatch", () => {
  it("lists new paths, and a deleted file by its old path", () => {
    const patch = [
      "diff --git a/lib/a.js b/lib/a.js",
      "--- a/lib/a.js",
      "+++ b/lib/a.js",
      "@@ -1 +1 @@",
      "-x",
      "+y",
      "diff --git a/old.js b/old.js",
      "deleted file mode 100644",
      "--- a/old.js",
      "+++ /dev/null",
      "diff --git a/new.js b/new.js",
      "new file mode 100644",
      "--- /dev/null",
      "+++ b/new.js",
      "diff --git a/test/empty.txt b/test/empty.txt",
      "new file mode 100644",
      "index 0000000..e69de29",
      "diff --git a/logo.png b/logo.png",
      "GIT binary patch",
      "literal 1",
    ].join("\n");
    expect(filesOfPatch(patch)).toEqual(["lib/a.js", "old.js", "new.js", "test/empty.txt", "logo.png"]);
  });
});
