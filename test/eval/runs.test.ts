import { describe, expect, it } from "vitest";
import { main } from "../../eval/main.js";
import { loadTasks } from "../../eval/task-suite.js";
import type { ModelRequest, ScriptedReply } from "../helpers/model-server.js";
import { oracleScript } from "./oracle-model.js";
import { useSmokeFixture } from "./smoke-fixture.js";
import { useEvalRun } from "./support.js";
import { PATIENCE_MS } from "../helpers/patience.js";

describe("npm run eval with --runs and --concurrency", () => {
  const { startModel, outDir } = useEvalRun();
  const smoke = useSmokeFixture();

  it("runs tasks concurrently and several times, and reports each task's spread", async () => {
    const ids = ["tiny-camelcase-2.1.0", "tiny-statuses-1.1.0"];
    const [first, ...rest] = oracleScript(loadTasks(smoke().smokeDir, ids), (id, file) =>
      smoke().file(id, "later", file),
    );
    // The first request is held until the second arrives (or PATIENCE_MS pass): only runs side by side can do that.
    let overlapped = false;
    const held = async (request: ModelRequest): Promise<ScriptedReply> => {
      for (let waited = 0; waited < PATIENCE_MS && !overlapped; waited += 50) {
        overlapped = model.requests.length >= 2;
        if (!overlapped) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      if (typeof first !== "function") throw new Error("the oracle script is made of functions");
      return first(request);
    };
    const model = await startModel([held, ...rest]);
    const out = outDir();
    const argv = [
      "--suite",
      "smoke",
      ...smoke().args,
      "--base-url",
      model.url,
      "--tasks",
      ids.join(","),
      "--runs",
      "2",
      "--concurrency",
      "4",
      "--out",
      out,
    ];
    const { exitCode, report } = await main(
      argv,
      { BLUEPRINT_MODEL_RETRIES: "0" },
      { stdout: () => {}, stderr: () => {} },
      { smokeDir: smoke().smokeDir },
    );

    expect(exitCode).toBe(0);
    expect(report?.runs.map((run) => `${run.task}#${run.run}`)).toEqual(ids.flatMap((id) => [`${id}#1`, `${id}#2`]));
    expect(report?.runs.every((run) => run.check.passed && run.plan.recall === 1 && run.plan.precision === 1)).toBe(
      true,
    );
    // camelcase's change is two files: one plan request, two writes and complete_step.
    const camelcase = report?.tasks.find((entry) => entry.task === "tiny-camelcase-2.1.0")?.summary;
    expect(camelcase).toMatchObject({
      runs: 2,
      planValid: 2,
      checkPassed: 2,
      requests: { min: 4, max: 4, sd: 0 },
      stepsDone: { median: 1 },
    });
    expect(report?.overall).toMatchObject({
      runs: 4,
      checkPassed: 4,
      totals: { requests: 14, errors: 0, promptTokens: 1_400, completionTokens: 280 },
    });
    expect(report?.overall.requests).toMatchObject({ min: 3, median: 3.5, max: 4 });
    expect(overlapped).toBe(true);
  });
});
