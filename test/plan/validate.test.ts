import { describe, expect, it } from "vitest";
import { validatePlan, checkRepoRelativePath, findCycle, MAX_STEPS } from "../../src/plan/validate.js";

type RawStep = {
  id: string;
  title?: string;
  details?: string;
  files?: string[];
  deps?: string[];
  [key: string]: unknown;
};

function rawPlan(steps: RawStep[], extra: Record<string, unknown> = {}) {
  return {
    title: "Add retries",
    summary: "Retry failed HTTP calls.",
    steps: steps.map((step) => ({ title: `Do ${step.id}`, details: "", files: [], deps: [], ...step })),
    risks: ["none"],
    verification: ["npm test"],
    ...extra,
  };
}

function errorsOf(input: unknown): string[] {
  const result = validatePlan(input);
  if (result.ok) throw new Error("expected the plan to be rejected");
  return result.errors;
}

describe("validatePlan", () => {
  it("accepts a well-formed plan and returns the parsed plan", () => {
    const result = validatePlan(
      rawPlan([
        { id: "S1", files: ["src/a.ts"] },
        { id: "S2", deps: ["S1"] },
      ]),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.plan.steps.map((step) => step.id)).toEqual(["S1", "S2"]);
    expect(result.plan.steps[1]?.deps).toEqual(["S1"]);
  });

  it("rejects duplicate step ids", () => {
    const errors = errorsOf(rawPlan([{ id: "S1" }, { id: "S1" }]));
    expect(errors).toContainEqual(expect.stringContaining("step id S1 is used more than once"));
  });

  it("rejects a dependency on a step that does not exist", () => {
    const errors = errorsOf(rawPlan([{ id: "S1", deps: ["S9"] }]));
    expect(errors).toContainEqual(expect.stringContaining("step S1 depends on S9, which is not a step of this plan"));
  });

  it("rejects a step that depends on itself", () => {
    const errors = errorsOf(rawPlan([{ id: "S1", deps: ["S1"] }]));
    expect(errors).toContainEqual("step S1 depends on itself");
  });

  it("rejects a dependency cycle and names its path", () => {
    const errors = errorsOf(
      rawPlan([
        { id: "S1", deps: ["S3"] },
        { id: "S2", deps: ["S1"] },
        { id: "S3", deps: ["S2"] },
      ]),
    );
    const cycle = errors.find((error) => error.startsWith("the dependencies form a cycle"));
    expect(cycle).toBe("the dependencies form a cycle: S1 → S3 → S2 → S1");
  });

  it("reports only the cycle, not the steps leading into it", () => {
    const plan = validatePlan(rawPlan([{ id: "S1" }]));
    if (!plan.ok) throw new Error("setup");
    const steps = [
      { ...plan.plan.steps[0]!, id: "S1", deps: ["S2"] },
      { ...plan.plan.steps[0]!, id: "S2", deps: ["S3"] },
      { ...plan.plan.steps[0]!, id: "S3", deps: ["S2"] },
    ];
    expect(findCycle({ ...plan.plan, steps })).toEqual(["S2", "S3", "S2"]);
    expect(findCycle({ ...plan.plan, steps: steps.map((step) => ({ ...step, deps: [] })) })).toBeNull();
  });

  it("rejects a plan with no steps", () => {
    const errors = errorsOf(rawPlan([]));
    expect(errors).toContainEqual("the plan needs at least one step");
  });

  it("accepts 30 steps and rejects 31", () => {
    const steps = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `S${i + 1}` }));
    expect(validatePlan(rawPlan(steps(MAX_STEPS))).ok).toBe(true);
    const errors = errorsOf(rawPlan(steps(31)));
    expect(errors).toContainEqual(expect.stringContaining("31 steps; at most 30"));
  });

  it.each([
    ["/etc/passwd", "is absolute"],
    ["C:\\Windows\\x", "is absolute"],
    ["~/x", "is absolute"],
    ["../outside.ts", "leaves the repository"],
    ["src/../../outside.ts", "leaves the repository"],
    ["..", "leaves the repository"],
    [".git/config", "is inside .git/"],
    ["./.git/hooks/pre-commit", "is inside .git/"],
    ["src/../.git/HEAD", "is inside .git/"],
  ])("rejects the file path %s", (file, reason) => {
    const errors = errorsOf(rawPlan([{ id: "S1", files: [file] }]));
    expect(errors).toContainEqual(expect.stringContaining(`step S1: file "${file}" ${reason}`));
  });

  it.each(["src/a.ts", "./README.md", "src/../lib/b.ts", ".github/workflows/ci.yml", ".gitignore", "a/.git-keep"])(
    "accepts the relative path %s",
    (file) => {
      expect(checkRepoRelativePath(file)).toBeNull();
      expect(validatePlan(rawPlan([{ id: "S1", files: [file] }])).ok).toBe(true);
    },
  );

  it("accepts null for the optional fields risk, complexity and questions", () => {
    const result = validatePlan(rawPlan([{ id: "S1", risk: null, complexity: null }], { questions: null }));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.plan.steps[0]?.risk).toBeUndefined();
    expect(result.plan.steps[0]?.complexity).toBeUndefined();
    expect(result.plan.questions).toBeUndefined();
  });

  it("keeps optional fields that are given", () => {
    const result = validatePlan(
      rawPlan([{ id: "S1", risk: "flaky", complexity: "high" }], { questions: ["Which API?"] }),
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.plan.steps[0]?.risk).toBe("flaky");
    expect(result.plan.steps[0]?.complexity).toBe("high");
    expect(result.plan.questions).toEqual(["Which API?"]);
  });

  it("turns schema errors into messages naming the field", () => {
    const errors = errorsOf(rawPlan([{ id: "step-1" }]));
    expect(errors).toContainEqual(expect.stringMatching(/^steps\.0\.id: step ids look like "S1"/));
    const missing = errorsOf({ summary: "x", steps: [] });
    expect(missing).toContainEqual(expect.stringMatching(/^title: /));
  });

  it("collects several problems at once", () => {
    const errors = errorsOf(rawPlan([{ id: "S1", deps: ["S7"], files: ["/abs"] }, { id: "S1" }]));
    expect(errors.length).toBeGreaterThanOrEqual(3);
  });
});
