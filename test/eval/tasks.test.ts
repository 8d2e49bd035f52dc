import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../eval/main.js";
import { smokeSources } from "../../eval/smoke-sources.js";
import { loadTasks } from "../../eval/task-suite.js";
import { tempDir } from "../helpers/git-repo.js";
import { FIXTURE_TASKS, useSmokeFixture, writeTask, type FixtureTask } from "./smoke-fixture.js";

const tasks = loadTasks();

describe("the smoke suite in the repository: only our own files", () => {
  it("ships at least twelve tasks, from several packages", () => {
    expect(tasks.length).toBeGreaterThanOrEqual(12);
    expect(new Set(tasks.map((task) => task.meta.package)).size).toBeGreaterThanOrEqual(8);
  });

  describe.each(tasks.map((task) => [task.id, task] as const))("%s", (_id, task) => {
    it("holds task.json, issue.md and its own check, no package code; the check's command runs files the check has", () => {
      expect(readdirSync(task.dir).filter((name) => !["task.json", "issue.md", "check"].includes(name))).toEqual([]);
      const own = task.checkDir ? readdirSync(task.checkDir) : [];
      const upstream = (task.meta.check.upstream ?? []).map((file) => path.basename(file));
      // The package's own tests are taken from the later version's tarball, never kept here.
      expect(own.filter((name) => upstream.includes(name))).toEqual([]);
      const run = task.meta.check.command
        .filter((word) => word.includes(".eval-check/"))
        .map((word) => word.slice(word.indexOf(".eval-check/") + ".eval-check/".length));
      expect(run.length).toBeGreaterThan(0);
      for (const file of run) expect([...own, ...upstream]).toContain(file);
      expect(task.meta.changedFiles.filter((file) => /^(history|changelog|changes)\b/i.test(file))).toEqual([]);
      expect(task.issue.length).toBeGreaterThan(80);
    });
  });
});

describe("a smoke task's sources, from packages on a registry (a double serving tiny packages made here)", () => {
  const smoke = useSmokeFixture();
  const npm = () => ({ registry: smoke().registry.url, cacheDir: smoke().cacheDir });

  it("starts from the earlier version without its release notes; the gold patch is the diff of the files task.json names; an upstream check is the later version's test", async () => {
    const [camelcase, encodeurl] = loadTasks(smoke().smokeDir, ["tiny-camelcase-2.1.0", "tiny-encodeurl-1.0.1"]);
    if (!encodeurl || !camelcase) throw new Error("fixture tasks missing");
    const sources = await smokeSources(encodeurl, npm());
    expect(sources.startingFiles).toEqual(["index.js", "LICENSE", "package.json", "README.md"]);
    // README.md and HISTORY.md changed too, but task.json names index.js only.
    expect(sources.goldPatch.match(/^diff --git .*$/gm)).toEqual(["diff --git a/index.js b/index.js"]);
    expect(sources.goldPatch).toContain(
      "-  return String(url).replace(/%(?![0-9A-Fa-f]{2}|$)/g, '%25')\n+  return String(url).replace(/%(?![0-9A-Fa-f]{2})/g, '%25')\n",
    );
    expect(sources.check.files.map((file) => file.name)).toEqual(["check.cjs"]);

    const upstream = await smokeSources(camelcase, npm());
    expect(upstream.check.files.map((file) => [file.name, readFileSync(file.source, "utf8")])).toEqual([
      ["options.js", FIXTURE_TASKS[1]?.later["test/options.js"]],
    ]);
    expect(upstream.startingFiles).not.toContain("test/options.js");
  });

  it("validates every task: its check fails on the earlier version and passes with the gold patch applied (npm run eval -- --suite smoke --validate)", async () => {
    const stdout: string[] = [];
    const { exitCode } = await main(
      ["--suite", "smoke", "--validate", ...smoke().args],
      {},
      { stdout: (text) => stdout.push(text), stderr: () => {} },
      { smokeDir: smoke().smokeDir },
    );
    expect(stdout.join("\n")).toContain(`${FIXTURE_TASKS.length} of ${FIXTURE_TASKS.length} valid.`);
    expect(exitCode).toBe(0);
  });

  it("fails validation with the reason: a check that passes on the earlier version, a named file that did not change, a version not published; a run stops before any task", async () => {
    const ms = FIXTURE_TASKS.find((task) => task.id === "tiny-ms-1.0.1") as FixtureTask;
    const broken: FixtureTask[] = [
      { ...ms, id: "passes-before", check: { "check.cjs": "require('..')\n" } },
      { ...ms, id: "unchanged-file", changedFiles: ["index.js", "license.md"] },
      { ...ms, id: "unpublished", to: "1.0.2" },
    ];
    const suite = tempDir("blueprint-eval-broken-suite-");
    try {
      for (const task of broken) writeTask(suite, task);
      const stdout: string[] = [];
      const validated = await main(
        ["--suite", "smoke", "--validate", ...smoke().args],
        {},
        { stdout: (text) => stdout.push(text), stderr: () => {} },
        { smokeDir: suite },
      );
      expect(validated.exitCode).toBe(1);
      const table = stdout.join("\n");
      expect(table).toContain("| passes-before | no | the hidden check passes on tiny-ms@1.0.0 |");
      expect(table).toContain(
        "| unchanged-file | no | validation could not run: task unchanged-file: license.md is the same in tiny-ms@1.0.0 and @1.0.1, but task.json names it among the changed files |",
      );
      expect(table).toContain(
        `| unpublished | no | validation could not run: tiny-ms@1.0.2: the registry ${smoke().registry.url} has no version 1.0.2 of tiny-ms (it has 1.0.0, 1.0.1) |`,
      );
      expect(table).toContain("0 of 3 valid.");

      const stderr: string[] = [];
      const out = tempDir("blueprint-eval-out-");
      const ran = await main(
        [
          "--suite",
          "smoke",
          ...smoke().args,
          "--tasks",
          "unpublished",
          "--no-preflight",
          "--base-url",
          "http://127.0.0.1:9/v1",
          "--out",
          out,
        ],
        {},
        { stdout: () => {}, stderr: (text) => stderr.push(text) },
        { smokeDir: suite },
      );
      expect(ran.exitCode).toBe(2);
      expect(stderr.join("\n")).toContain("eval: tiny-ms@1.0.2: the registry");
      expect(existsSync(out) && readdirSync(out)).toEqual([]);
      rmSync(out, { recursive: true, force: true });
    } finally {
      rmSync(suite, { recursive: true, force: true });
    }
  });
});
