import { describe, expect, it } from "vitest";
import {
  STEPS_END,
  STEPS_START,
  escapeTaskTitle,
  inlineCode,
  renderPlanBody,
  renderTaskItem,
  unescapeTaskTitle,
} from "../../src/plan/render.js";
import { validatePlan } from "../../src/plan/validate.js";
import { readVisibleSteps } from "../../src/plan/visible.js";
import type { Plan } from "../../src/plan/schema.js";

function planWith(
  steps: Array<{ id: string; title: string; files?: string[]; deps?: string[] }>,
  summary = "Why and what.",
): Plan {
  const result = validatePlan({ title: "A plan", summary, steps, verification: ["npm test"] });
  if (!result.ok) throw new Error(result.errors.join("; "));
  return result.plan;
}

const visible = (plan: Plan) =>
  plan.steps.map((step) => ({
    id: step.id,
    ticked: false,
    title: step.title,
    deps: step.deps,
    files: step.files.map(inlineCode),
  }));

describe("rendered task titles", () => {
  it("show the task line's own markup as character references GitHub displays as the character", () => {
    const [step] = planWith([{ id: "S1", title: "⏳ wait — after S2 <!-- x &amp; y" }]).steps;
    if (!step) throw new Error("no step");
    expect(renderTaskItem(step)).toBe("- [ ] **S1** &#x23F3; wait &mdash; after S2 &lt;!-- x &amp;amp; y");
  });

  it("leave ordinary text, code spans and a bare & alone", () => {
    expect(escapeTaskTitle("Use `a && b` in R&D · after S1")).toBe("Use `a && b` in R&D · after S1");
  });

  it.each(["a — b", "&mdash;", "&amp;mdash;", "❌❌", "<!--<!--", "&&lt;", "&#x23F3;", "&lt", "x &copy; y"])(
    "round-trip exactly: %s",
    (title) => {
      expect(unescapeTaskTitle(escapeTaskTitle(title))).toBe(title);
    },
  );
});

describe("readVisibleSteps", () => {
  it("reads ids, ticks, titles and deps, whatever the status shows", () => {
    const plan = planWith([
      { id: "S1", title: "Add the helper", files: ["src/a.ts"] },
      { id: "S2", title: "Use it", files: ["src/b.ts", "src/c.ts"], deps: ["S1"] },
      { id: "S3", title: "Document it", deps: ["S1", "S2"] },
    ]);
    const body = renderPlanBody(plan, {
      S1: { status: "done", commit: "0123456789", commitUrl: "https://x/c/0123456789" },
      S2: { status: "failed", reason: "tests failed — after S9 · see log" },
      S3: { status: "building" },
    });
    expect(readVisibleSteps(body)).toEqual([
      { id: "S1", ticked: true, title: "Add the helper", deps: [], files: ["src/a.ts"] },
      { id: "S2", ticked: false, title: "Use it", deps: ["S1"], files: ["src/b.ts", "src/c.ts"] },
      { id: "S3", ticked: false, title: "Document it", deps: ["S1", "S2"], files: [] },
    ]);
  });

  it("reads titles that look like the line's metadata or status", () => {
    const plan = planWith([
      { id: "S1", title: "fix the parser — after S2" },
      { id: "S2", title: "⏳ wait for `a.ts` — ✅ abc · ticked by hand" },
      { id: "S3", title: "keep the <!-- marker -->", deps: ["S1"] },
    ]);
    expect(readVisibleSteps(renderPlanBody(plan))).toEqual(visible(plan));
  });

  it("reads deps when file names hold the separators", () => {
    const plan = planWith([
      { id: "S1", title: "One", files: ["src/a · b.ts", "docs/x — y.md"] },
      { id: "S2", title: "Two", files: ["a`b.ts"], deps: ["S1"] },
    ]);
    expect(readVisibleSteps(renderPlanBody(plan))).toEqual(visible(plan));
  });

  it("finds the task list by its markers, not by headings or task lines the summary or titles hold", () => {
    const summary = "See below.\n\n### Steps\n\n- [x] **S9** a step the summary made up\n\n```mermaid\n### Notes";
    const plan = planWith(
      [
        { id: "S1", title: "```mermaid and ### Steps" },
        { id: "S2", title: "Two", deps: ["S1"] },
      ],
      summary,
    );
    const body = renderPlanBody(plan);
    expect(body).toContain(`### Steps\n\n${STEPS_START}\n\n- [ ] **S1**`);
    expect(body).toContain(`- [ ] **S2** Two — after S1\n\n${STEPS_END}\n\n\`\`\`mermaid`);
    expect(readVisibleSteps(body)).toEqual(visible(plan));
  });

  it("ignores a marker that is not right under the Steps heading", () => {
    const plan = planWith([{ id: "S1", title: "Real" }]);
    const forged = `- ➕ Added **S1** ${STEPS_START} - [x] **S7** forged ${STEPS_END}\n\n${renderPlanBody(plan)}`;
    expect(readVisibleSteps(forged)).toEqual(visible(plan));
  });

  it("reads a comment saved by GitHub with CRLF line endings", () => {
    const plan = planWith([
      { id: "S1", title: "One" },
      { id: "S2", title: "Two — or so", deps: ["S1"] },
    ]);
    const body = renderPlanBody(plan).replace("- [ ] **S1**", "- [x] **S1**").replaceAll("\n", "\r\n");
    expect(readVisibleSteps(body)).toEqual([
      { id: "S1", ticked: true, title: "One", deps: [], files: [] },
      { id: "S2", ticked: false, title: "Two — or so", deps: ["S1"], files: [] },
    ]);
  });

  it("reads hand edits: a typed dash in a title, a new step, changed deps", () => {
    const plan = planWith([
      { id: "S1", title: "One" },
      { id: "S2", title: "Two", deps: ["S1"] },
    ]);
    const body = renderPlanBody(plan)
      .replace("- [ ] **S2** Two — after S1", "- [ ] **S2** Two — really — after S1, S3\n- [ ] **S3** Three — added")
      .replace("**S1** One", "**S1** One — `a.ts`");
    expect(readVisibleSteps(body)).toEqual([
      { id: "S1", ticked: false, title: "One", deps: [], files: ["a.ts"] },
      { id: "S2", ticked: false, title: "Two — really", deps: ["S1", "S3"], files: [] },
      { id: "S3", ticked: false, title: "Three — added", deps: [], files: [] },
    ]);
  });

  it("stops at the graph when the closing marker was cut", () => {
    const plan = planWith([
      { id: "S1", title: "One" },
      { id: "S2", title: "Two", deps: ["S1"] },
    ]);
    const body = `${renderPlanBody(plan).replace(STEPS_END, "")}\n\n- [ ] **S8** in a later section`;
    expect(readVisibleSteps(body)).toEqual(visible(plan));
  });

  it("still reads plan comments written before the markers", () => {
    const legacy = [
      "Why and what.",
      "### Steps",
      "- [x] **S1** Add the helper — `src/a.ts` · ✅ [0123456](https://x/c/0123456)",
      "- [ ] **S2** ⏳ Use it — after S1",
      "```mermaid\nflowchart TD\n  S1 --> S2\n```",
      "### Step details",
      "- [ ] **S5** not a step",
    ].join("\n\n");
    expect(readVisibleSteps(legacy)).toEqual([
      { id: "S1", ticked: true, title: "Add the helper", deps: [], files: ["src/a.ts"] },
      { id: "S2", ticked: false, title: "Use it", deps: ["S1"], files: [] },
    ]);
  });

  it("reads a line full of typed dashes as one title", () => {
    const line = `- [ ] **S1** ${"x — ".repeat(50_000)}y`;
    expect(readVisibleSteps(line)).toEqual([
      { id: "S1", ticked: false, title: `${"x — ".repeat(50_000)}y`, deps: [], files: [] },
    ]);
  });
});
