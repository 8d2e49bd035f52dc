import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { filesOfPatch, issueFromGitHub, loadRealSuite, readRealSuites, trimLinks } from "../../eval/swe/index.js";

const temp = mkdtempSync(path.join(os.tmpdir(), "swe-real-suite-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

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

/** An upstream repository (as `--repos DIR` holds it) and a suite that names one of its fixes. */
function makeSuite(): { root: string; reposDir: string; base: string; fix: string } {
  const reposDir = path.join(temp, "repos");
  const upstream = path.join(reposDir, "example__lib");
  mkdirSync(upstream, { recursive: true });
  git(upstream, "init", "-q", "-b", "main");
  git(upstream, "config", "user.name", "Upstream");
  git(upstream, "config", "user.email", "upstream@example.invalid");
  write(upstream, "index.js", "module.exports = 1;\n");
  write(upstream, "test/index.js", "// tests\n");
  git(upstream, "add", "-A");
  git(upstream, "commit", "-q", "-m", "base");
  const base = git(upstream, "rev-parse", "HEAD").trim();
  write(upstream, "index.js", "module.exports = 2;\n");
  write(upstream, "HISTORY.md", "fixed it\n");
  write(upstream, "test/index.js", "// tests\n// one more\n");
  git(upstream, "add", "-A");
  git(upstream, "commit", "-q", "-m", "fix, fixes #7");
  const fix = git(upstream, "rev-parse", "HEAD").trim();
  const root = path.join(temp, "suites");
  write(root, "example__lib/lockfiles/base.package-lock.json", '{\n  "lockfileVersion": 3\n}\n');
  write(
    root,
    "example__lib/suite.json",
    JSON.stringify({
      repo: "example/lib",
      license: "MIT",
      tasks: [
        {
          instance_id: "example__lib-7",
          base_commit: base,
          fix_commit: fix,
          issue: 7,
          test_paths: ["test/"],
          test_cmd: "node --test --test-reporter=tap test/",
          test_runner: "node-test",
          lockfile: "lockfiles/base.package-lock.json",
          FAIL_TO_PASS: ["a"],
          PASS_TO_PASS: [],
        },
      ],
    }),
  );
  return { root, reposDir, base, fix };
}

describe("the real suite loader", () => {
  it("splits the fix into the gold patch (without release notes) and test_patch, ships the lockfile as lockfile_patch, and keeps the issue's words without links", async () => {
    const { root, reposDir, base } = makeSuite();
    const cacheDir = path.join(temp, "cache");
    const asked: string[] = [];
    const fetchIssue = async (repo: string, issue: number) => {
      asked.push(`${repo}#${issue}`);
      return {
        title: "It returns 1",
        body: "See [the docs](https://example.invalid/docs) and https://example.invalid/x ![shot](https://example.invalid/s.png).",
      };
    };
    const [inst] = await loadRealSuite({ root, reposDir, cacheDir, fetchIssue });
    expect(inst).toMatchObject({
      instance_id: "example__lib-7",
      repo: "example/lib",
      base_commit: base,
      FAIL_TO_PASS: ["a"],
      source: { reposDir },
      issue_url: "https://github.com/example/lib/issues/7",
      test_files: ["test/index.js"],
    });
    expect(filesOfPatch(inst?.patch ?? "")).toEqual(["index.js"]);
    expect(filesOfPatch(inst?.test_patch ?? "")).toEqual(["test/index.js"]);
    expect(filesOfPatch(inst?.lockfile_patch ?? "")).toEqual(["package-lock.json"]);
    expect(inst?.problem_statement).toBe("It returns 1\n\nSee the docs and  .\n");
    // The text is kept in the cache: a second load does not ask again.
    await loadRealSuite({ root, reposDir, cacheDir, fetchIssue });
    expect(asked).toEqual(["example/lib#7"]);
    expect(readFileSync(path.join(cacheDir, "issues", "example__lib-7.md"), "utf8")).toContain("See the docs");
  });

  it("says which issue it could not load, and validation can go without issue texts", async () => {
    const { root, reposDir } = makeSuite();
    const offline = async () => {
      throw new Error("getaddrinfo ENOTFOUND api.github.com");
    };
    await expect(
      loadRealSuite({ root, reposDir, cacheDir: path.join(temp, "empty-cache"), fetchIssue: offline }),
    ).rejects.toThrow("could not load the text of example/lib#7 (getaddrinfo ENOTFOUND api.github.com)");
    const [inst] = await loadRealSuite({
      root,
      reposDir,
      cacheDir: path.join(temp, "empty-cache"),
      problemStatements: false,
    });
    expect(inst?.problem_statement).toBe("(issue text not loaded: https://github.com/example/lib/issues/7)");
    await expect(loadRealSuite({ root, reposDir, problemStatements: false, only: ["nope"] })).rejects.toThrow(
      "unknown real task: nope",
    );
  });

  it("takes an issue's title and body from GitHub's answer, and refuses a pull request", () => {
    expect(issueFromGitHub({ title: "Broken", body: null, number: 7 }, 7)).toEqual({ title: "Broken", body: "" });
    expect(() => issueFromGitHub({ title: "Fix it", body: "fixes #6", pull_request: { url: "x" } }, 7)).toThrow(
      "#7 is a pull request, not an issue",
    );
  });

  it("trims only links from an issue", () => {
    expect(trimLinks("a [b](http://x.y/(z)) <https://q.r> c\r\nd ![i](http://x/i.png)")).toBe("a b  c\nd ");
  });
});

describe("eval/suites/real", () => {
  const suites = readRealSuites();

  it("has at least 12 tasks from at least 4 repositories, each with distinct ids, a lockfile or none needed, and both test lists", () => {
    expect(suites.length).toBeGreaterThanOrEqual(4);
    const tasks = suites.flatMap((suite) => suite.tasks.map((task) => ({ ...task, dir: suite.dir })));
    expect(tasks.length).toBeGreaterThanOrEqual(12);
    expect(new Set(tasks.map((task) => task.instance_id)).size).toBe(tasks.length);
    for (const task of tasks) {
      expect(task.FAIL_TO_PASS.length, task.instance_id).toBeGreaterThan(0);
      expect(task.PASS_TO_PASS.length, task.instance_id).toBeGreaterThan(0);
      expect(
        task.FAIL_TO_PASS.filter((id) => task.PASS_TO_PASS.includes(id)),
        task.instance_id,
      ).toEqual([]);
      if (task.lockfile)
        expect(JSON.parse(readFileSync(path.join(task.dir, task.lockfile), "utf8"))).toHaveProperty("lockfileVersion");
    }
  });
});
