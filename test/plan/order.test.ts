import { describe, expect, it } from "vitest";
import { buildOrder, withDependencies } from "../../src/plan/order.js";
import { validatePlan } from "../../src/plan/validate.js";
import type { Plan } from "../../src/plan/schema.js";

function plan(steps: Array<{ id: string; deps?: string[] }>): Plan {
  const result = validatePlan({
    title: "t",
    summary: "s",
    steps: steps.map((step) => ({
      id: step.id,
      title: `title ${step.id}`,
      details: "",
      files: [],
      deps: step.deps ?? [],
    })),
    risks: [],
    verification: [],
  });
  if (!result.ok) throw new Error(result.errors.join("; "));
  return result.plan;
}

const ids = (steps: { id: string }[]) => steps.map((step) => step.id);

describe("buildOrder", () => {
  it("puts every step after its dependencies", () => {
    const order = ids(buildOrder(plan([{ id: "S1", deps: ["S3"] }, { id: "S2", deps: ["S1"] }, { id: "S3" }])));
    expect(order).toEqual(["S3", "S1", "S2"]);
  });

  it("breaks ties by numeric id: S2 before S10", () => {
    const order = ids(buildOrder(plan([{ id: "S10" }, { id: "S2" }, { id: "S1" }])));
    expect(order).toEqual(["S1", "S2", "S10"]);
  });

  it("prefers the lowest ready id at every point, not only at the start", () => {
    // S1 unlocks S10; S3 is independent. After S1: ready are S3 and S10 → S3 first.
    const order = ids(
      buildOrder(plan([{ id: "S10", deps: ["S1"] }, { id: "S3" }, { id: "S1" }, { id: "S11", deps: ["S10"] }])),
    );
    expect(order).toEqual(["S1", "S3", "S10", "S11"]);
  });

  it("throws on a cycle instead of looping", () => {
    const acyclic = plan([{ id: "S1" }, { id: "S2" }]);
    const cyclic: Plan = {
      ...acyclic,
      steps: acyclic.steps.map((step) => ({ ...step, deps: step.id === "S1" ? ["S2"] : ["S1"] })),
    };
    expect(() => buildOrder(cyclic)).toThrow(/cycle/);
  });
});

describe("withDependencies", () => {
  const graph = plan([
    { id: "S1" },
    { id: "S2", deps: ["S1"] },
    { id: "S3", deps: ["S2"] },
    { id: "S4" },
    { id: "S5", deps: ["S4", "S3"] },
    { id: "S6" },
  ]);

  it("picks the named step and its transitive dependencies, in build order", () => {
    expect(ids(withDependencies(graph, ["S3"]))).toEqual(["S1", "S2", "S3"]);
    expect(ids(withDependencies(graph, ["S5"]))).toEqual(["S1", "S2", "S3", "S4", "S5"]);
  });

  it("does not include unrelated steps or dependents", () => {
    const picked = ids(withDependencies(graph, ["S2", "S6"]));
    expect(picked).toEqual(["S1", "S2", "S6"]);
    expect(picked).not.toContain("S3");
  });

  it("ignores unknown ids", () => {
    expect(ids(withDependencies(graph, ["S99", "S4"]))).toEqual(["S4"]);
    expect(withDependencies(graph, [])).toEqual([]);
  });
});
