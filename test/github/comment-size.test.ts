import { describe, expect, it } from "vitest";
import { COMMENT_LIMIT, closeOpenBlocks, fitComment } from "../../src/github/comment-size.js";
import { renderPlanComment } from "../../src/github/plan-comment.js";
import { readStateMarker } from "../../src/github/state-marker.js";
import { pendingState, testSeal } from "../helpers/plan-state.js";

function hugePlan() {
  const details =
    "A long paragraph of details. ".repeat(400) + "\n\n```ts\nconst x = 1;\n" + "x;\n".repeat(300) + "```";
  return {
    title: "A very large plan",
    summary: "Summary first.",
    steps: Array.from({ length: 30 }, (_, i) => ({
      id: `S${i + 1}`,
      title: `Step ${i + 1}`,
      details,
      files: [`src/f${i}.ts`],
      deps: i > 0 ? [`S${i}`] : [],
    })),
    risks: ["r"],
    verification: ["npm test"],
  };
}

describe("fitComment", () => {
  it("leaves bodies under the limit alone", () => {
    expect(fitComment("short")).toBe("short");
  });

  it("fits a huge plan comment under GitHub's limit, keeping the summary, the steps and the state", () => {
    const state = pendingState(hugePlan(), { base: { branch: "main", sha: "a".repeat(40) } });
    const body = renderPlanComment(state, testSeal(1));
    expect(body.length).toBeGreaterThan(COMMENT_LIMIT);
    const fitted = fitComment(body);
    expect(fitted.length).toBeLessThanOrEqual(COMMENT_LIMIT);
    expect(fitted).toContain("Summary first.");
    expect(fitted).toContain("- [ ] **S30** Step 30");
    expect(fitted).toMatch(/✂️ [\d,]+ characters were cut/);
    const marker = readStateMarker(fitted, testSeal(1));
    expect(marker.kind).toBe("ok");
    expect(marker.kind === "ok" && marker.state.plan?.steps).toHaveLength(30);
    // Whatever was cut, fences and <details> stay balanced.
    expect(closeOpenBlocks(fitted)).toBe("");
  });

  it("closes a fence and details left open by the cut", () => {
    expect(closeOpenBlocks("<details><summary>x</summary>\n\n```js\ncode")).toBe("\n```\n\n</details>");
  });
});
