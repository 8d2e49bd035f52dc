import { describe, expect, it } from "vitest";
import { outsidePlan, renderOutsidePlan } from "../../src/workflow/approval/outside-plan.js";
import { pendingState } from "../helpers/plan-state.js";
import { samplePlan } from "../helpers/model-server.js";

const planListing = (...entries: string[][]) => {
  const state = pendingState(
    samplePlan({
      steps: entries.map((files, i) => ({ id: `S${i + 1}`, title: `Step ${i + 1}`, details: "", files, deps: [] })),
    }),
  );
  if (!state.plan) throw new Error("no plan");
  return { plan: state.plan, state };
};

describe("outsidePlan", () => {
  it("is nothing when every file changed is one the plan lists, in any step", () => {
    const { plan } = planListing(["src/a.ts"], ["README.md"]);
    expect(outsidePlan(plan, ["src/a.ts", "README.md"])).toBeUndefined();
  });

  it("names the files no entry covers", () => {
    const { plan } = planListing(["src/a.ts"]);
    expect(outsidePlan(plan, ["src/a.ts", "src/b.ts", "README.md"])).toEqual({
      files: ["src/b.ts", "README.md"],
      total: 2,
    });
  });

  it("reads a directory entry, with or without its slash, as everything under it (and nothing beside it)", () => {
    for (const entry of ["docs/", "docs", "./docs/"]) {
      const { plan } = planListing([entry]);
      expect(outsidePlan(plan, ["docs/a.md", "docs/deep/b.md", "docsy/c.md", "src/docs/d.md"])).toEqual({
        files: ["docsy/c.md", "src/docs/d.md"],
        total: 2,
      });
    }
  });

  it("reads globs from the root: `*` within a segment, `**` across segments", () => {
    expect(outsidePlan(planListing(["src/*.ts"]).plan, ["src/a.ts", "src/a.js", "lib/src/b.ts"])?.files).toEqual([
      "src/a.js",
      "lib/src/b.ts",
    ]);
    expect(
      outsidePlan(planListing(["src/**/*.test.ts"]).plan, ["src/x/y/a.test.ts", "src/a.test.ts", "src/a.ts"])?.files,
    ).toEqual(["src/a.ts"]);
    expect(outsidePlan(planListing(["*.md"]).plan, ["README.md", "docs/a.md"])?.files).toEqual(["docs/a.md"]);
    expect(outsidePlan(planListing(["."]).plan, ["anything/at/all"])).toBeUndefined();
  });

  it("names at most twenty files and counts the rest", () => {
    const changed = Array.from({ length: 25 }, (_, i) => `gen/${i}.ts`);
    const outside = outsidePlan(planListing(["src/"]).plan, changed);
    expect(outside?.files).toHaveLength(20);
    expect(outside?.total).toBe(25);
  });
});

describe("renderOutsidePlan", () => {
  it("lists, per step, what the step changed outside the plan, or says nothing", () => {
    const { plan, state } = planListing(["src/a.ts"], ["README.md"]);
    expect(renderOutsidePlan(plan, state)).toBeNull();
    state.steps.S2 = { status: "done", outsidePlan: { files: ["src/x.ts", "src/y.ts"], total: 5 } };
    expect(renderOutsidePlan(plan, state)).toBe(
      "**Changed outside the plan's files** (no step of the plan lists them):\n- **S2** outside the plan: `src/x.ts`, `src/y.ts`, and 3 more",
    );
  });

  it("keeps a file name with a backtick or a line break inside its code span", () => {
    const { plan, state } = planListing(["src/a.ts"]);
    state.steps.S1 = { status: "done", outsidePlan: { files: ["x`@maintainer`\n# y"], total: 1 } };
    expect(renderOutsidePlan(plan, state)).toContain("- **S1** outside the plan: `x'@maintainer' # y`");
  });
});
