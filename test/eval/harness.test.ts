import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../eval/main.js";
import { buildReply, call, done, plan, planReply, PLAN_USAGE, step } from "./script.js";
import { useSmokeFixture } from "./smoke-fixture.js";
import { useEvalRun } from "./support.js";

describe("npm run eval against a scripted model", () => {
  const { startModel, outDir } = useEvalRun();
  const smoke = useSmokeFixture();

  it("scores two solved tasks and one failed in a known way, exactly", async () => {
    const statusesCodes = smoke().file("tiny-statuses-1.1.0", "later", "codes.json");
    const model = await startModel([
      // tiny-bytes-1.0.1 — fails: the plan names the README as well as index.js (precision 0.5); S1 edits only the
      // README,
      // then the agent reports S2 blocked, which stops the build there. The bug stays: the hidden check fails.
      planReply(plan([step("S1", ["Readme.md"]), step("S2", ["index.js"], ["S1"])])),
      buildReply("edit_file", {
        path: "Readme.md",
        old_string: "# Bytes utility",
        new_string: "# Bytes utility\n\nSee the fractional-part note below.",
      }),
      done("S1"),
      buildReply("complete_step", {
        step_id: "S2",
        summary: "I cannot tell which rounding the issue wants.",
        outcome: "blocked",
      }),
      // tiny-encodeurl-1.0.1 — solved: reads the code, plans the one file, makes the real one-line change.
      { ...call("read_file", { path: "index.js" }), usage: PLAN_USAGE },
      planReply(plan([step("S1", ["index.js"])])),
      buildReply("edit_file", { path: "index.js", ...smoke().realEdit("tiny-encodeurl-1.0.1", "index.js") }),
      done("S1"),
      // tiny-statuses-1.1.0 — solved: writes the real codes.json, and a test of its own (not counted against
      // precision).
      planReply(plan([step("S1", ["codes.json"]), step("S2", ["test/early-hints.js"], ["S1"])])),
      buildReply("write_file", { path: "codes.json", content: statusesCodes }),
      done("S1"),
      buildReply("write_file", {
        path: "test/early-hints.js",
        content: "require('assert').strictEqual(require('..')[103], 'Early Hints')\n",
      }),
      done("S2"),
    ]);
    const out = outDir();
    const stdout: string[] = [];
    const argv = [
      "--suite",
      "smoke",
      ...smoke().args,
      "--base-url",
      model.url,
      "--model",
      "scripted",
      "--tasks",
      "tiny-statuses-1.1.0,tiny-encodeurl-1.0.1,tiny-bytes-1.0.1",
      "--out",
      out,
      "--price-in",
      "2",
      "--price-out",
      "8",
      "--price-cached",
      "0.5",
    ];
    const { exitCode, report } = await main(
      argv,
      { BLUEPRINT_MODEL_RETRIES: "0" },
      { stdout: (text) => stdout.push(text), stderr: () => {} },
      { smokeDir: smoke().smokeDir },
    );

    expect(exitCode).toBe(0);
    if (!report) throw new Error("no report");
    const byTask = Object.fromEntries(report.runs.map((run) => [run.task, run]));
    const facts = (id: string) => {
      const run = byTask[id];
      if (!run) throw new Error(`no run for ${id}`);
      return {
        valid: run.plan.valid,
        recall: run.plan.recall,
        precision: run.plan.precision,
        passed: run.check.passed,
        done: run.build.stepsDone,
        blocked: run.build.stepsBlocked,
        failed: run.build.stepsFailed,
        status: run.build.status,
        usage: run.usage.total,
      };
    };
    expect(facts("tiny-bytes-1.0.1")).toEqual({
      valid: true,
      recall: 1,
      precision: 0.5,
      passed: false,
      done: 1,
      blocked: 1,
      failed: 0,
      status: "failed",
      usage: { requests: 4, errors: 0, prompt: 7_000, cached: 4_900, completion: 1_000 },
    });
    expect(facts("tiny-encodeurl-1.0.1")).toEqual({
      valid: true,
      recall: 1,
      precision: 1,
      passed: true,
      done: 1,
      blocked: 0,
      failed: 0,
      status: "built",
      usage: { requests: 4, errors: 0, prompt: 6_000, cached: 3_800, completion: 800 },
    });
    expect(facts("tiny-statuses-1.1.0")).toEqual({
      valid: true,
      recall: 1,
      precision: 1,
      passed: true,
      done: 2,
      blocked: 0,
      failed: 0,
      status: "built",
      usage: { requests: 5, errors: 0, prompt: 9_000, cached: 6_400, completion: 1_300 },
    });
    // The phases are counted apart: planning encodeurl took two requests, building it two.
    expect(byTask["tiny-encodeurl-1.0.1"]?.usage.plan).toEqual({
      requests: 2,
      errors: 0,
      prompt: 2_000,
      cached: 800,
      completion: 200,
    });
    expect(byTask["tiny-encodeurl-1.0.1"]?.usage.build).toEqual({
      requests: 2,
      errors: 0,
      prompt: 4_000,
      cached: 3_000,
      completion: 600,
    });
    // Cost: (uncached prompt × $2 + cached × $0.50 + completion × $8) per million.
    expect(byTask["tiny-encodeurl-1.0.1"]?.cost).toBeCloseTo((2_200 * 2 + 3_800 * 0.5 + 800 * 8) / 1e6, 12);

    expect(report.overall).toMatchObject({
      runs: 3,
      planValid: 3,
      checkPassed: 2,
      totals: { requests: 13, errors: 0, promptTokens: 22_000, cachedTokens: 15_100, completionTokens: 3_100 },
    });
    expect(report.overall.recall).toMatchObject({ min: 1, max: 1 });
    expect(report.overall.precision).toMatchObject({ min: 0.5, median: 1, max: 1 });

    // The same figures, printed and written as JSON and Markdown.
    const markdown = stdout.join("\n");
    // Quality: passed, plan valid, first try, recall, precision, build inside the plan, steps, questions.
    expect(markdown).toContain("| tiny-bytes-1.0.1 | no | yes | yes | 1.00 | 0.50 | yes | 1 | 1 | 0 | 0 |");
    expect(markdown).toContain("| tiny-encodeurl-1.0.1 | yes | yes | yes | 1.00 | 1.00 | yes | 1 | 0 | 0 | 0 |");
    expect(markdown).toContain(
      "| **all** | 2/3 | 3/3 | 3/3 | 1.00 | 1.00 (0.50–1.00) | 3/3 | 1 (1–2) | 0 (0–1) | 0 | 0 |",
    );
    // Spend: turns and dollars per phase, tokens.
    expect(markdown).toContain("| tiny-bytes-1.0.1 | 1 | 3 | 7,000 | 4,900 | 1,000 |");
    expect(markdown).toContain("| tiny-encodeurl-1.0.1 | 2 | 2 | 6,000 | 3,800 | 800 | 0.0044 | 0.0083 | 0.0127 |");
    expect(markdown).toContain("| **all** | 1 (1–2) | 3 (2–4) | 7,000 (6,000–9,000) |");
    const written = readdirSync(out)
      .filter((name) => name.startsWith("eval-"))
      .sort();
    expect(written.map((name) => path.extname(name))).toEqual([".json", ".md", ".svg"]);
    const json = JSON.parse(readFileSync(path.join(out, written[0] ?? ""), "utf8")) as {
      overall: { checkPassed: number };
    };
    expect(json.overall.checkPassed).toBe(2);
    expect(readFileSync(path.join(out, written[1] ?? ""), "utf8")).toBe(markdown);
    // The packages came from the registry double once: packument and tarball of each version.
    expect(
      smoke()
        .registry.requests.filter((url) => url.endsWith(".tgz"))
        .sort(),
    ).toEqual(
      [
        "tiny-bytes-1.0.0",
        "tiny-bytes-1.0.1",
        "tiny-encodeurl-1.0.0",
        "tiny-encodeurl-1.0.1",
        "tiny-statuses-1.0.0",
        "tiny-statuses-1.1.0",
      ].map((file) => `/${file.replace(/-\d.*/, "")}/-/${file}.tgz`),
    );
    // Three CLI runs in child processes, with real git and npm tests: ~9 s alone, several times that on a busy machine.
  });
});
