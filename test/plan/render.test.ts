import { describe, expect, it } from "vitest";
import { renderPlanBody, renderTaskItem, renderMermaid } from "../../src/plan/render.js";
import { validatePlan } from "../../src/plan/validate.js";
import type { Plan } from "../../src/plan/schema.js";

function makePlan(): Plan {
  const result = validatePlan({
    title: "Add retries",
    summary: "Retry failed HTTP calls.",
    steps: [
      {
        id: "S1",
        title: "Add the helper",
        details: "Write `retry()` with backoff.",
        files: ["src/retry.ts"],
        deps: [],
        complexity: "low",
      },
      {
        id: "S2",
        title: 'Use "retry" in <client>',
        details: "Wrap the calls.",
        files: ["src/client.ts"],
        deps: ["S1"],
        risk: "timeouts",
      },
      { id: "S3", title: "Document it", details: "", files: [], deps: ["S1", "S2"] },
    ],
    risks: ["Retries could hide real outages"],
    verification: ["npm test"],
    questions: ["Which status codes are retryable?"],
  });
  if (!result.ok) throw new Error(result.errors.join("; "));
  return result.plan;
}

const step = (plan: Plan, id: string) => {
  const found = plan.steps.find((s) => s.id === id);
  if (!found) throw new Error(id);
  return found;
};

describe("renderTaskItem", () => {
  const plan = makePlan();

  it("renders an open task with bold id, title, files and deps", () => {
    expect(renderTaskItem(step(plan, "S1"))).toBe("- [ ] **S1** Add the helper — `src/retry.ts`");
    expect(renderTaskItem(step(plan, "S3"))).toBe("- [ ] **S3** Document it — after S1, S2");
  });

  it("ticks a done step and links its commit", () => {
    const line = renderTaskItem(step(plan, "S1"), {
      status: "done",
      commit: "0123456789abcdef",
      commitUrl: "https://github.example/o/r/commit/0123456789abcdef",
    });
    expect(line.startsWith("- [x] **S1** Add the helper")).toBe(true);
    expect(line).toContain("[0123456](https://github.example/o/r/commit/0123456789abcdef)");
  });

  it("shows the short sha without a link when there is no commit url", () => {
    const line = renderTaskItem(step(plan, "S1"), { status: "done", commit: "0123456789abcdef" });
    expect(line).toMatch(/^- \[x\] \*\*S1\*\*/);
    expect(line).toContain("✅ 0123456");
    expect(line).not.toContain("](");
  });

  it("marks a failed step with ❌ and its reason, unticked", () => {
    const line = renderTaskItem(step(plan, "S2"), { status: "failed", reason: "tests\nfailed" });
    expect(line.startsWith("- [ ] **S2** ❌ ")).toBe(true);
    expect(line).toContain("failed: tests failed");
  });

  it("does not tick pending or building steps", () => {
    expect(renderTaskItem(step(plan, "S1"), { status: "pending" })).toMatch(/^- \[ \] \*\*S1\*\* Add/);
    expect(renderTaskItem(step(plan, "S1"), { status: "building" })).toMatch(/^- \[ \] \*\*S1\*\* ⏳ Add/);
  });
});

describe("renderMermaid", () => {
  const mermaid = renderMermaid(makePlan());

  it("is a fenced mermaid flowchart", () => {
    const lines = mermaid.split("\n");
    expect(lines[0]).toBe("```mermaid");
    expect(lines[1]).toBe("flowchart TD");
    expect(lines.at(-1)).toBe("```");
  });

  it("has one edge per dependency", () => {
    expect(mermaid).toContain("  S1 --> S2");
    expect(mermaid).toContain("  S1 --> S3");
    expect(mermaid).toContain("  S2 --> S3");
    expect(mermaid.match(/-->/g)).toHaveLength(3);
  });

  it("escapes quotes and angle brackets in labels", () => {
    expect(mermaid).toContain('S2["S2: Use #quot;retry#quot; in #lt;client#gt;"]');
    const label = mermaid.split("\n").find((line) => line.includes('S2["'));
    expect(label?.match(/"/g)).toHaveLength(2); // only the label's own delimiters
  });
});

describe("renderPlanBody", () => {
  const body = renderPlanBody(makePlan(), {
    S1: { status: "done", commit: "abcdef1234", commitUrl: "https://x/c/abcdef1234" },
  });

  it("contains the summary, task list, mermaid graph, risks, verification and questions", () => {
    expect(body.startsWith("Retry failed HTTP calls.")).toBe(true);
    expect(body).toContain("- [x] **S1** Add the helper");
    expect(body).toContain("- [ ] **S2** ");
    expect(body).toContain("```mermaid\nflowchart TD");
    expect(body).toContain("### Risks\n\n- Retries could hide real outages");
    expect(body).toContain("### Verification\n\n- `npm test`");
    expect(body).toContain("### Open questions\n\n- Which status codes are retryable?");
  });

  it("folds each step's details inside <details>", () => {
    const blocks = body.match(/<details>[\s\S]*?<\/details>/g) ?? [];
    expect(blocks).toHaveLength(3);
    expect(blocks[0]).toContain("<summary><b>S1</b> Add the helper</summary>");
    expect(blocks[0]).toContain("Write `retry()` with backoff.");
    expect(blocks[0]).toContain("**Complexity:** low");
    expect(blocks[1]).toContain('<summary><b>S2</b> Use "retry" in &lt;client&gt;</summary>');
    expect(blocks[1]).toContain("**Risk:** timeouts");
    expect(blocks[1]).toContain("**Depends on:** S1");
    expect(blocks[2]).toContain("_No further details._");
  });

  it("says so when there are no verification commands", () => {
    const plan = { ...makePlan(), verification: [], risks: [], questions: undefined };
    const text = renderPlanBody(plan);
    expect(text).toContain("_No verification commands were given._");
    expect(text).not.toContain("### Risks");
    expect(text).not.toContain("### Open questions");
  });
});
