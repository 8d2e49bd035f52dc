import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { z } from "zod";
import { readInputs } from "../../src/action/inputs.js";
import { outputsOf } from "../../src/action/summary.js";

const actionSchema = z.object({
  inputs: z.record(
    z.string(),
    z.object({ description: z.string().min(1), required: z.boolean().optional(), default: z.string().optional() }),
  ),
  outputs: z.record(z.string(), z.object({ description: z.string().min(1) })),
  runs: z.object({ using: z.string(), main: z.string() }),
});
const action = actionSchema.parse(parse(readFileSync("action.yml", "utf8")));

describe("action.yml", () => {
  it("runs the committed bundle on node24", () => {
    expect(action.runs).toEqual({ using: "node24", main: "dist/index.js" });
    expect(existsSync(action.runs.main)).toBe(true);
  });

  it("defaults github-token to the job's token and min-permission to write", () => {
    expect(action.inputs["github-token"]?.default).toBe("${{ github.token }}");
    expect(action.inputs["min-permission"]?.default).toBe("write");
  });

  it("declares exactly the inputs the runner reads, each of which takes effect", () => {
    const samples: Record<string, [string, (inputs: ReturnType<typeof readInputs>) => unknown]> = {
      "github-token": ["ghs_fromInput", (read) => read.githubToken],
      "openai-api-key": ["sk-fromInput", (read) => read.engine.OPENAI_API_KEY],
      "openai-base-url": ["http://127.0.0.1:9/v1", (read) => read.engine.OPENAI_BASE_URL],
      model: ["some-model", (read) => read.engine.BLUEPRINT_MODEL],
      "min-permission": ["maintain", (read) => read.engine.BLUEPRINT_MIN_PERMISSION],
      "max-iterations": ["7", (read) => String(read.engine.BLUEPRINT_MAX_ITERATIONS)],
      "max-minutes": ["9", (read) => String(read.engine.BLUEPRINT_MAX_MINUTES)],
      "max-tokens": ["1234", (read) => String(read.engine.BLUEPRINT_MAX_TOKENS)],
      "max-cost": ["0.75", (read) => String(read.engine.BLUEPRINT_MAX_COST)],
      workdir: ["/tmp/blueprint-input-workdir", (read) => read.engine.BLUEPRINT_WORKDIR],
      "bot-login": ["my-app[bot]", (read) => read.botLogin],
      "state-secret": ["state-secret-from-input", (read) => read.engine.BLUEPRINT_STATE_SECRET],
    };
    expect(Object.keys(action.inputs).sort()).toEqual(Object.keys(samples).sort());
    const base = { "INPUT_GITHUB-TOKEN": "ghs_base", "INPUT_STATE-SECRET": "state-secret-base-value" };
    for (const [name, [value, read]] of Object.entries(samples)) {
      expect(read(readInputs({ ...base, [`INPUT_${name.toUpperCase()}`]: value })), name).toBe(value);
    }
  });

  it("refuses a max-cost that is not an amount above 0 by the input's name", () => {
    const base = { "INPUT_GITHUB-TOKEN": "ghs_base", "INPUT_STATE-SECRET": "state-secret-base-value" };
    for (const amount of ["0", "-1", "five dollars"])
      expect(() => readInputs({ ...base, "INPUT_MAX-COST": amount }), amount).toThrow(
        /^invalid settings: input max-cost: /,
      );
    expect(readInputs(base).engine.BLUEPRINT_MAX_COST).toBeUndefined();
  });

  it("declares exactly the outputs the runner sets", () => {
    const none = outputsOf({
      latest: null,
      plan: null,
      changed: false,
      failed: false,
      error: null,
      pullRequestUrl: null,
      replies: [],
    });
    expect(Object.keys(action.outputs).sort()).toEqual(Object.keys(none).sort());
  });
});
