import { copyFileSync, existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../eval/main.js";
import { buildReply, done, plan, planReply, step } from "./script.js";
import { useSmokeFixture } from "./smoke-fixture.js";
import { closedPort, useEvalRun } from "./support.js";

const quiet = { stdout: () => {}, stderr: () => {} };

describe("an eval people can trust: time limit, resume, exit codes", () => {
  const { startModel, outDir } = useEvalRun();
  const smoke = useSmokeFixture();

  it("fails a run past --task-timeout with the reason, killing the CLI whose model never answers", async () => {
    const model = await startModel([{ hang: true }]);
    const out = outDir();
    const { exitCode, report } = await main(
      [
        "--suite",
        "smoke",
        ...smoke().args,
        "--tasks",
        "tiny-ms-1.0.1",
        "--task-timeout",
        "6",
        "--base-url",
        model.url,
        "--out",
        out,
      ],
      { BLUEPRINT_MODEL_RETRIES: "0", BLUEPRINT_MODEL_TIMEOUT_S: "600" },
      quiet,
      { smokeDir: smoke().smokeDir },
    );

    expect(exitCode).toBe(1);
    expect(report?.runs[0]).toMatchObject({
      failure: "time limit (6 s)",
      check: { ran: false, passed: false },
      exitCodes: { plan: null },
      error: null,
    });
    // The CLI was killed: a request it had made to the model was cut off, not answered.
    expect(model.events.filter((event) => event.startsWith("closed"))).toEqual(
      model.events.filter((event) => event.startsWith("request")).map((event) => event.replace("request", "closed")),
    );
    const log = readFileSync(report?.runs[0]?.log ?? "", "utf8");
    expect(log).toContain("[time limit: killing the CLI's process group]");
    expect(readFileSync(path.join(out, readdirSync(out).find((name) => name.endsWith(".md")) ?? ""), "utf8")).toContain(
      "- tiny-ms-1.0.1 run 1: time limit (6 s)",
    );
  });

  it("--resume keeps the runs already done and runs the rest; --fail-under sets the exit code, and a run where nothing passes exits 1", async () => {
    const model = await startModel([
      planReply(plan([step("S1", ["index.js"])])),
      buildReply("edit_file", { path: "index.js", ...smoke().realEdit("tiny-encodeurl-1.0.1", "index.js") }),
      done("S1"),
      // tiny-ms-1.0.1: a plan, then the endpoint fails the build.
      planReply(plan([step("S1", ["index.js"])])),
      { status: 400 },
    ]);
    const out = outDir();
    const common = ["--suite", "smoke", ...smoke().args, "--base-url", model.url, "--out", out];
    const first = await main([...common, "--tasks", "tiny-encodeurl-1.0.1"], { BLUEPRINT_MODEL_RETRIES: "0" }, quiet, {
      smokeDir: smoke().smokeDir,
    });
    expect(first.exitCode).toBe(0);
    const file = path.join(out, readdirSync(out).find((name) => name.endsWith(".json")) ?? "");
    // The results file is written as each run ends: it already holds the finished run.
    expect(JSON.parse(readFileSync(file, "utf8"))).toMatchObject({
      runs: [{ task: "tiny-encodeurl-1.0.1", run: 1, check: { passed: true } }],
    });

    const both = ["--tasks", "tiny-encodeurl-1.0.1,tiny-ms-1.0.1", "--resume", file];
    const resumed = await main([...common, ...both], { BLUEPRINT_MODEL_RETRIES: "0" }, quiet, {
      smokeDir: smoke().smokeDir,
    });
    expect(model.requests).toHaveLength(5);
    expect(resumed.report?.runs.map((run) => [run.task, run.check.passed])).toEqual([
      ["tiny-encodeurl-1.0.1", true],
      ["tiny-ms-1.0.1", false],
    ]);
    expect(resumed.report?.runs[0]).toEqual(first.report?.runs[0]);
    expect(JSON.parse(readFileSync(file, "utf8"))).toMatchObject({
      runs: [{ task: "tiny-encodeurl-1.0.1" }, { task: "tiny-ms-1.0.1" }],
    });
    expect(existsSync(file.replace(/\.json$/, ".svg"))).toBe(true);
    // One of two runs passed.
    expect(resumed.exitCode).toBe(0);
    expect(
      (await main([...common, ...both, "--fail-under", "0.6"], {}, quiet, { smokeDir: smoke().smokeDir })).exitCode,
    ).toBe(1);
    expect(
      (await main([...common, ...both, "--fail-under", "50%"], {}, quiet, { smokeDir: smoke().smokeDir })).exitCode,
    ).toBe(0);
    expect(model.requests).toHaveLength(5);

    // Resuming with fewer tasks would drop a run from the file: refused. A copy holding only the failed run…
    const stderr: string[] = [];
    const dropping = await main(
      [...common, "--tasks", "tiny-ms-1.0.1", "--resume", file],
      {},
      { stdout: () => {}, stderr: (text) => stderr.push(text) },
      { smokeDir: smoke().smokeDir },
    );
    expect(dropping.exitCode).toBe(2);
    expect(stderr.join("\n")).toContain("holds runs this selection would drop (tiny-encodeurl-1.0.1 run 1)");
    const failedOnly = path.join(out, "failed-only.json");
    copyFileSync(file, failedOnly);
    const report = JSON.parse(readFileSync(failedOnly, "utf8")) as { runs: Array<{ task: string }> };
    const { writeJsonAtomic } = await import("../../eval/results-store.js");
    writeJsonAtomic(failedOnly, { ...report, runs: report.runs.filter((run) => run.task === "tiny-ms-1.0.1") });
    // … exits 1 when no run passed, unless --fail-under 0 says that is acceptable.
    expect(
      (
        await main([...common, "--tasks", "tiny-ms-1.0.1", "--resume", failedOnly], {}, quiet, {
          smokeDir: smoke().smokeDir,
        })
      ).exitCode,
    ).toBe(1);
    expect(
      (
        await main([...common, "--tasks", "tiny-ms-1.0.1", "--resume", failedOnly, "--fail-under", "0"], {}, quiet, {
          smokeDir: smoke().smokeDir,
        })
      ).exitCode,
    ).toBe(0);
    expect(model.requests).toHaveLength(5);
  });

  it("says what is wrong with the endpoint before any task starts, and starts none", async () => {
    const out = outDir();
    const stderr: string[] = [];
    const closed = await closedPort();
    const { exitCode, report } = await main(
      [
        "--suite",
        "smoke",
        ...smoke().args,
        "--tasks",
        "tiny-ms-1.0.1",
        "--base-url",
        `http://127.0.0.1:${closed}/v1`,
        "--out",
        out,
      ],
      {},
      { stdout: () => {}, stderr: (text) => stderr.push(text) },
      { smokeDir: smoke().smokeDir },
    );
    expect(exitCode).toBe(2);
    expect(report).toBeNull();
    expect(stderr.join("\n")).toContain(
      `the model endpoint does not work, so no task was started: connection refused at http://127.0.0.1:${closed}/v1`,
    );
    expect(readdirSync(out)).toEqual([]);
  });
});
