import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { chooseItems } from "../../eval/items.js";
import type { Judge } from "../../eval/judge.js";
import { main } from "../../eval/main.js";
import { gitIn } from "../helpers/git-repo.js";
import { BUILD_USAGE, buildReply, done, plan, planReply, PLAN_USAGE, step } from "./script.js";
import { scriptedJudge } from "./scripted-judge.js";
import { useEvalRun } from "./support.js";
import { TINY_BASE_COMMIT, tinyRepos } from "./tiny-repo.js";

const FIXTURE = path.resolve("test/fixtures/eval/tiny-math.jsonl");
const FIXED = "blueprint-eval__tiny-math-1";
const F2P = "test/sum.test.js > sums an empty list to 0";
const P2P = "test/sum.test.js > sums numbers";

describe("npm run eval on SWE-bench-format instances (--dataset FILE --repos DIR)", () => {
  const { startModel, outDir } = useEvalRun();

  it("checks out base_commit, installs, plans, builds, and judges with test_patch applied only then: scored exactly", async () => {
    const repos = tinyRepos();
    expect(gitIn(path.join(repos, "blueprint-eval__tiny-math"), ["rev-parse", "HEAD"]).trim()).toBe(TINY_BASE_COMMIT);
    const fixture = readFileSync(FIXTURE, "utf8");
    expect(fixture).toContain(TINY_BASE_COMMIT);
    const model = await startModel([
      // The first plan is refused (S1 depends on a step that does not exist); the second is kept.
      planReply(plan([step("S1", ["index.js"], ["S9"])])),
      planReply(plan([step("S1", ["index.js"])])),
      buildReply("edit_file", { path: "index.js", old_string: "total + value);", new_string: "total + value, 0);" }),
      done("S1"),
    ]);
    const calls: string[] = [];
    const stdout: string[] = [];
    const argv = [
      "--dataset",
      FIXTURE,
      "--repos",
      repos,
      "--trust-dataset-commands",
      "--tasks",
      FIXED,
      "--base-url",
      model.url,
      "--model",
      "scripted",
      "--price-in",
      "2",
      "--price-out",
      "8",
      "--price-cached",
      "0.5",
      "--out",
      outDir(),
    ];
    const { exitCode, report } = await main(
      argv,
      { BLUEPRINT_MODEL_RETRIES: "0" },
      { stdout: (text) => stdout.push(text), stderr: () => {} },
      { judge: scriptedJudge(calls) },
    );

    expect(exitCode).toBe(0);
    const run = report?.runs[0];
    expect(run).toMatchObject({
      task: FIXED,
      kind: "swe",
      plan: { valid: true, firstTry: false, rejected: 1, files: ["index.js"], recall: 1, precision: 1 },
      build: {
        ran: true,
        status: "built",
        stepsDone: 1,
        stepsBlocked: 0,
        stepsFailed: 0,
        files: ["index.js"],
        outsidePlan: [],
        inPlan: true,
      },
      check: { ran: true, passed: true },
      tests: { FAIL_TO_PASS: { success: [F2P], failure: [] }, PASS_TO_PASS: { success: [P2P], failure: [] } },
      failure: null,
      error: null,
    });
    expect(calls).toEqual([`checkout ${FIXED}`, `install ${FIXED}`, `judge ${FIXED}`]);
    // Two plan turns and two build turns, each with the script's usage; cost per phase at $2 in / $0.50 cached / $8
    // out.
    expect(run?.usage.plan).toEqual({
      requests: 2,
      errors: 0,
      prompt: 2 * PLAN_USAGE.prompt,
      cached: 2 * PLAN_USAGE.cached,
      completion: 2 * PLAN_USAGE.completion,
    });
    expect(run?.usage.build).toEqual({
      requests: 2,
      errors: 0,
      prompt: 2 * BUILD_USAGE.prompt,
      cached: 2 * BUILD_USAGE.cached,
      completion: 2 * BUILD_USAGE.completion,
    });
    expect(run?.costByPhase.plan).toBeCloseTo((1_200 * 2 + 800 * 0.5 + 200 * 8) / 1e6, 12);
    expect(run?.costByPhase.build).toBeCloseTo((1_000 * 2 + 3_000 * 0.5 + 600 * 8) / 1e6, 12);
    expect(report?.passAt).toEqual({ k1: 1, kN: 1 });
    // The model never saw the test the judge added.
    expect(JSON.stringify(model.requests)).not.toContain("sums an empty list");
    const markdown = stdout.join("\n");
    expect(markdown).toContain(`| ${FIXED} | yes | yes | no | 1.00 | 1.00 | yes | 1 | 0 | 0 | 0 |`);
    expect(markdown).toContain(`| ${FIXED} | 2 | 2 | 6,000 | 3,800 | 800 | 0.0044 | 0.0083 | 0.0127 |`);
  });

  it("scores a build that leaves the bug as unresolved, naming the failing FAIL_TO_PASS test, and exits 1", async () => {
    const repos = tinyRepos();
    const model = await startModel([
      planReply(plan([step("S1", ["index.js", "README.md"])])),
      buildReply("write_file", { path: "README.md", content: "# tiny-math\n" }),
      done("S1"),
    ]);
    const argv = [
      "--dataset",
      FIXTURE,
      "--repos",
      repos,
      "--trust-dataset-commands",
      "--tasks",
      FIXED,
      "--base-url",
      model.url,
      "--out",
      outDir(),
    ];
    const { exitCode, report } = await main(
      argv,
      { BLUEPRINT_MODEL_RETRIES: "0" },
      { stdout: () => {}, stderr: () => {} },
      { judge: scriptedJudge() },
    );

    expect(exitCode).toBe(1);
    expect(report?.runs[0]).toMatchObject({
      plan: { valid: true, firstTry: true, rejected: 0, recall: 1, precision: 0.5 },
      build: { files: ["README.md"], outsidePlan: [], inPlan: true },
      check: { ran: true, passed: false },
      tests: { FAIL_TO_PASS: { success: [], failure: [F2P] }, PASS_TO_PASS: { success: [P2P], failure: [] } },
    });
  });

  it("--validate prints a table of each instance and exits 1 when one fails; --validate-first leaves it unscored", async () => {
    const repos = tinyRepos();
    const stdout: string[] = [];
    const validate = await main(
      ["--dataset", FIXTURE, "--repos", repos, "--trust-dataset-commands", "--validate"],
      {},
      { stdout: (text) => stdout.push(text), stderr: () => {} },
      { judge: scriptedJudge() },
    );
    expect(validate.exitCode).toBe(1);
    const table = stdout.join("\n");
    expect(table).toMatch(new RegExp(`\\| ${FIXED} \\| yes \\| – \\| \\d+\\.\\d \\|`));
    expect(table).toContain(
      `| blueprint-eval__tiny-math-broken | no | FAIL_TO_PASS test passes without the gold patch: ${P2P} |`,
    );
    expect(table).toContain("1 of 2 valid.");

    const model = await startModel([]);
    const out = outDir();
    const run = await main(
      [
        "--dataset",
        FIXTURE,
        "--repos",
        repos,
        "--trust-dataset-commands",
        "--tasks",
        "blueprint-eval__tiny-math-broken",
        "--validate-first",
        "--base-url",
        model.url,
        "--out",
        out,
      ],
      {},
      { stdout: () => {}, stderr: () => {} },
      { judge: scriptedJudge() },
    );
    expect(run.report).toMatchObject({
      unscored: ["blueprint-eval__tiny-math-broken"],
      runs: [],
      validation: { "blueprint-eval__tiny-math-broken": { ok: false } },
    });
    expect(model.requests).toHaveLength(0);
    expect(run.exitCode).toBe(1);
  });

  it("takes the real suite from the judge's loadRealSuite, with each instance's source, asking only for the chosen tasks", async () => {
    const asked: unknown[] = [];
    const [tiny] = scriptedJudge().loadInstances(FIXTURE);
    if (!tiny) throw new Error("fixture empty");
    const judge: Judge = {
      ...scriptedJudge(),
      loadRealSuite: async (options) => {
        asked.push(options);
        return [
          { ...tiny, source: { reposDir: "/repos" } },
          { ...tiny, instance_id: "other", bundle: "/b.bundle" },
        ];
      },
    };
    const items = await chooseItems({ suite: "real" }, undefined, {
      smokeDir: "/unused",
      realRoot: "/suites/real",
      judge: () => judge,
    });
    expect(items.map((item) => (item.kind === "swe" ? [item.id, item.source] : item.id))).toEqual([
      [FIXED, { reposDir: "/repos" }],
      ["other", { bundle: "/b.bundle" }],
    ]);
    await chooseItems({ suite: "real", reposDir: "/mine" }, [FIXED], { smokeDir: "/unused", judge: () => judge });
    // --cache: where the real suite keeps its clones too.
    await chooseItems({ suite: "real" }, [FIXED], { smokeDir: "/unused", cacheDir: "/cache", judge: () => judge });
    expect(asked).toEqual([
      { root: "/suites/real" },
      { reposDir: "/mine", only: [FIXED] },
      { cacheDir: "/cache", only: [FIXED] },
    ]);
    await expect(chooseItems({ suite: "real" }, ["nope"], { smokeDir: "/unused", judge: () => judge })).rejects.toThrow(
      /unknown task: nope/,
    );
    await expect(
      chooseItems({ suite: "real" }, undefined, {
        smokeDir: "/unused",
        judge: () => ({ ...judge, loadRealSuite: () => [] }),
      }),
    ).rejects.toThrow(/the real suite .* holds no instances/);
  });
});
