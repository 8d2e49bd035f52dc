import path from "node:path";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { MAX_PATH_LENGTH, MAX_STEPS, validatePlan } from "../../src/plan/validate.js";
import { buildOrder } from "../../src/plan/order.js";
import { planSchema, type Plan } from "../../src/plan/schema.js";
import { readVisibleSteps } from "../../src/plan/visible.js";
import { inlineCode, renderPlanBody } from "../../src/plan/render.js";

const RUNS = 2000;

// ---- an independent oracle for what a valid plan is (src/plan/) --------------------------------------

/** Relative and inside the repository, not under .git/; backslashes count as separators, as in the app. */
function isInsideRepo(file: string): boolean {
  if (file.includes("\0") || file === "~" || file.startsWith("~/")) return false;
  const unix = file.replaceAll("\\", "/");
  if (unix.startsWith("/") || /^[a-zA-Z]:\//.test(unix)) return false;
  const resolved = path.posix.resolve("/repo", unix);
  if (resolved !== "/repo" && !resolved.startsWith("/repo/")) return false;
  const relative = path.posix.relative("/repo", resolved);
  return relative !== ".git" && !relative.startsWith(".git/");
}

/** Kahn's algorithm: true when every step can be ordered after its dependencies. */
function isAcyclic(plan: Plan): boolean {
  const pending = new Map(plan.steps.map((step) => [step.id, new Set(step.deps)]));
  let progressed = true;
  while (pending.size > 0 && progressed) {
    progressed = false;
    for (const [id, deps] of pending) {
      if ([...deps].every((dep) => !pending.has(dep))) {
        pending.delete(id);
        progressed = true;
      }
    }
  }
  return pending.size === 0;
}

function structurallyValid(plan: Plan): boolean {
  const ids = plan.steps.map((step) => step.id);
  return (
    plan.steps.length >= 1 &&
    plan.steps.length <= MAX_STEPS &&
    new Set(ids).size === ids.length &&
    plan.steps.every((step) => step.deps.every((dep) => dep !== step.id && ids.includes(dep))) &&
    plan.steps.every((step) => step.files.every(isInsideRepo)) &&
    isAcyclic(plan)
  );
}

// ---- generators -------------------------------------------------------------------------------

const idPool = fc.constantFrom("S1", "S2", "S3", "S4", "S5", "S01", "S999", "S1000", "s1", "X1", "", " S2 ", "S3\n");
const depValue = fc.oneof({ weight: 4, arbitrary: idPool }, { weight: 1, arbitrary: fc.string({ maxLength: 4 }) });
const filePool = fc.constantFrom(
  "src/a.ts",
  "README.md",
  ".",
  "./",
  "a//b",
  "a/../b",
  ".github/workflows/ci.yml",
  "..foo",
  ".gitignore",
  ".git2/x",
  "~user/x",
  "../x",
  "..",
  "a/../../b",
  "/etc/passwd",
  "C:\\x",
  "c:/x",
  "~/x",
  "~",
  "a\0b",
  "",
  " ",
  "..\\..\\x",
  "\\etc\\passwd",
  ".git",
  ".git/config",
  "./.git/HEAD",
  "a/../.git/x",
  "src/../../x",
);
const fileValue = fc.oneof({ weight: 4, arbitrary: filePool }, { weight: 1, arbitrary: fc.string({ maxLength: 12 }) });
const text = fc.oneof(
  fc.constant(""),
  fc.constant("   "),
  fc.string({ maxLength: 30 }),
  fc.string({ unit: "binary", maxLength: 10 }),
);

const planShapedStep = fc.record(
  {
    id: idPool,
    title: text,
    details: fc.oneof(text, fc.constant(null)),
    files: fc.array(fileValue, { maxLength: 3 }),
    deps: fc.array(depValue, { maxLength: 4 }),
    risk: fc.oneof(text, fc.constant(null)),
    complexity: fc.constantFrom(null, "low", "medium", "high", "extreme"),
  },
  { requiredKeys: ["id", "title"] },
);
/** Steps that pass the schema (ids look like S1, titles are set), so only the structural rules decide. */
const wellTypedStep = fc.record({
  id: fc.constantFrom("S1", "S2", "S3", "S4", "S5", "S01", "S999", " S2 "),
  title: fc.constantFrom("Add it", "Fix  the\nparser", "x"),
  files: fc.array(
    filePool.filter((file) => file.trim() !== ""),
    { maxLength: 3 },
  ),
  deps: fc.array(depValue, { maxLength: 4 }),
});
const wellTypedPlan = fc.record({
  title: fc.constant("A plan"),
  summary: fc.constant("Why and what."),
  steps: fc.oneof(
    { weight: 5, arbitrary: fc.array(wellTypedStep, { maxLength: 6 }) },
    { weight: 1, arbitrary: fc.array(wellTypedStep, { minLength: 28, maxLength: 34 }) },
  ),
});

const planShaped = fc.record(
  {
    title: text,
    summary: text,
    steps: fc.oneof(
      { weight: 5, arbitrary: fc.array(planShapedStep, { maxLength: 6 }) },
      { weight: 1, arbitrary: fc.array(planShapedStep, { minLength: 28, maxLength: 34 }) },
    ),
    risks: fc.oneof(fc.array(text, { maxLength: 3 }), fc.constant(null)),
    verification: fc.oneof(fc.array(text, { maxLength: 3 }), fc.constant(null)),
    questions: fc.oneof(fc.array(text, { maxLength: 2 }), fc.constant(null)),
  },
  { requiredKeys: ["title", "summary", "steps"] },
);

/** Plans that pass validation: ids unique, deps on earlier-generated steps, files inside, then shuffled. */
function validPlanWith(
  title: fc.Arbitrary<string>,
  summary: fc.Arbitrary<string>,
  file: fc.Arbitrary<string>,
): fc.Arbitrary<Plan> {
  return fc
    .integer({ min: 1, max: 10 })
    .chain((count) =>
      fc.record({
        title: title,
        summary: summary,
        numbers: fc.uniqueArray(fc.integer({ min: 0, max: 999 }), { minLength: count, maxLength: count }),
        order: fc.shuffledSubarray([...Array(count).keys()], { minLength: count, maxLength: count }),
        steps: fc.array(
          fc.record({ title, files: fc.array(file, { maxLength: 3 }), depPicks: fc.array(fc.nat(), { maxLength: 3 }) }),
          {
            minLength: count,
            maxLength: count,
          },
        ),
      }),
    )
    .map(({ numbers, order, steps, ...plan }) => {
      const ids = numbers.map((n) => `S${n}`);
      const built = steps.map(({ depPicks, ...step }, index) => ({
        ...step,
        id: ids[index],
        details: "",
        deps: index === 0 ? [] : [...new Set(depPicks.map((pick) => ids[pick % index]))],
      }));
      const checked = validatePlan({
        ...plan,
        steps: order.map((index) => built[index]),
        risks: [],
        verification: ["npm test"],
      });
      if (!checked.ok) throw new Error(`generator made an invalid plan: ${checked.errors.join("; ")}`);
      return checked.plan;
    });
}

const plainTitle = fc.string({ minLength: 1, maxLength: 60 }).filter((title) => title.trim() !== "");
const plainFile = fc
  .array(fc.stringMatching(/^[a-z0-9_-]{1,8}(\.[a-z]{1,3})?$/), { minLength: 1, maxLength: 3 })
  .map((parts) => parts.join("/"));
const normalise = (value: string) => value.replace(/\s+/g, " ").trim();
const expectedVisible = (plan: Plan) =>
  plan.steps.map((step) => ({
    id: step.id,
    ticked: false,
    title: normalise(step.title),
    deps: step.deps,
    files: step.files.map(inlineCode),
  }));

// ---- validatePlan -----------------------------------------------------------------------------

function expectErrorsOrInvariants(input: unknown): void {
  const result = validatePlan(input);
  if (!result.ok) {
    expect(result.errors.length).toBeGreaterThan(0);
    for (const error of result.errors) {
      expect(typeof error).toBe("string");
      expect(error.trim().length).toBeGreaterThan(0);
    }
    return;
  }
  const plan = result.plan;
  const ids = plan.steps.map((step) => step.id);
  expect(plan.steps.length).toBeGreaterThanOrEqual(1);
  expect(plan.steps.length).toBeLessThanOrEqual(MAX_STEPS);
  expect(new Set(ids).size).toBe(ids.length);
  for (const step of plan.steps) {
    for (const dep of step.deps) {
      expect(ids).toContain(dep);
      expect(dep).not.toBe(step.id);
    }
    for (const file of step.files) expect(isInsideRepo(file), `file ${JSON.stringify(file)} of ${step.id}`).toBe(true);
  }
  const order = buildOrder(plan).map((step) => step.id);
  expect([...order].sort()).toEqual([...ids].sort());
  for (const step of plan.steps)
    for (const dep of step.deps) expect(order.indexOf(dep)).toBeLessThan(order.indexOf(step.id));
}

describe("validatePlan", () => {
  it("never throws on arbitrary values, and explains every rejection", () => {
    fc.assert(fc.property(fc.anything(), expectErrorsOrInvariants), { numRuns: RUNS });
    fc.assert(fc.property(fc.jsonValue(), expectErrorsOrInvariants), { numRuns: RUNS });
  });

  it("never throws on plan-shaped objects with random ids, deps and files; an accepted plan keeps the rules", () => {
    fc.assert(fc.property(planShaped, expectErrorsOrInvariants), { numRuns: RUNS });
  });

  it("accepts a well-typed plan exactly when its ids, deps, cycles, step count and files are right", () => {
    fc.assert(
      fc.property(wellTypedPlan, (input) => {
        const typed = planSchema.safeParse(input);
        if (!typed.success) throw new Error(`the generator made an ill-typed plan: ${typed.error.message}`);
        const shape = JSON.stringify(
          typed.data.steps.map((step) => ({ id: step.id, deps: step.deps, files: step.files })),
        );
        expect(validatePlan(input).ok, shape).toBe(structurallyValid(typed.data));
      }),
      { numRuns: RUNS },
    );
  });

  // Normalising a long "../" chain is quadratic (1 MB took minutes), so the length is checked first.
  it("refuses a file path over the length cap for its length, without echoing it whole", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("", "src/", "./", "a\\", "\\"),
        fc.integer({ min: Math.ceil(MAX_PATH_LENGTH / 3), max: 350_000 }),
        (prefix, count) => {
          const file = prefix + "../".repeat(count);
          const result = validatePlan({
            title: "T",
            summary: "S",
            steps: [{ id: "S1", title: "Do it", files: [file] }],
          });
          expect(result).toEqual({
            ok: false,
            errors: [
              expect.stringContaining(
                `is too long (${file.length} characters; at most ${MAX_PATH_LENGTH} are allowed)`,
              ),
            ],
          });
          if (!result.ok) expect(result.errors[0]?.length).toBeLessThan(400);
        },
      ),
      { numRuns: 20 },
    );
  });

  it("judges a path up to the length cap on its merits", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("../", "a/", "a\\", "./", "src/../"),
        fc.integer({ min: 1, max: MAX_PATH_LENGTH }),
        (chunk, length) => {
          const file = chunk.repeat(Math.ceil(length / chunk.length)).slice(0, length);
          const result = validatePlan({
            title: "T",
            summary: "S",
            steps: [{ id: "S1", title: "Do it", files: [file] }],
          });
          expect(result.ok, `${JSON.stringify(chunk)} up to ${length} characters`).toBe(isInsideRepo(file));
          if (!result.ok) expect(result.errors.join("\n")).not.toMatch(/too long/);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("accepts generated valid plans and keeps them as they were sent", () => {
    fc.assert(
      fc.property(validPlanWith(plainTitle, plainTitle, plainFile), (plan) => {
        expect(validatePlan(plan)).toEqual({ ok: true, plan });
      }),
      { numRuns: 500 },
    );
  });
});

// ---- readVisibleSteps -------------------------------------------------------------------------

const MARKDOWN_PIECES = [
  "### Steps",
  "### Step details",
  "\n### ",
  "```mermaid",
  "```",
  "\n",
  "\r\n",
  " ",
  "- [ ] ",
  "- [x] ",
  "* [X] ",
  "**S1**",
  "**S22**",
  "**S1000**",
  " — ",
  " · ",
  "after S1",
  "after S2, S3",
  "`src/a.ts`",
  "`a`, `b`",
  "✅ abc1234",
  "ticked by hand",
  "failed: x",
  "❌ ",
  "⏳ ",
  "title",
  "é",
  "😀",
  "<!--",
  "-->",
  "—",
  "·",
];
const markdown = fc.oneof(
  fc.string({ unit: fc.constantFrom(...MARKDOWN_PIECES), maxLength: 60 }),
  fc.string({ unit: "binary", maxLength: 200 }),
);

describe("readVisibleSteps", () => {
  it("never throws on arbitrary markdown and returns well-formed steps", () => {
    fc.assert(
      fc.property(markdown, (body) => {
        for (const step of readVisibleSteps(body)) {
          expect(step.id).toMatch(/^S\d{1,3}$/);
          expect(typeof step.ticked).toBe("boolean");
          expect(typeof step.title).toBe("string");
          for (const dep of step.deps) expect(typeof dep).toBe("string");
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("reads back ids, titles and deps, in order, from a rendered plan", () => {
    fc.assert(
      fc.property(validPlanWith(plainTitle, plainTitle, plainFile), (plan) => {
        expect(readVisibleSteps(renderPlanBody(plan))).toEqual(expectedVisible(plan));
      }),
      { numRuns: 1000 },
    );
  });

  // A plan's own words may look like the comment's markup; reading must still recover the plan.
  const markupWords = (words: string[]) =>
    fc
      .array(fc.constantFrom(...words), { minLength: 1, maxLength: 6 })
      .map((parts) => parts.join(" "))
      .filter((title) => title.trim() !== "");

  it("reads back step titles that look like the task line's metadata", () => {
    const title = markupWords([
      "fix",
      "the",
      "parser",
      "—",
      "after",
      "S1",
      "S2,",
      "·",
      "`a.ts`",
      "✅",
      "ticked by hand",
      "failed:",
      "❌",
      "⏳",
    ]);
    fc.assert(
      fc.property(validPlanWith(title, plainTitle, plainFile), (plan) => {
        expect(readVisibleSteps(renderPlanBody(plan))).toEqual(expectedVisible(plan));
      }),
      { numRuns: 500 },
    );
  });

  it("reads back step titles holding an HTML comment opener", () => {
    const title = markupWords(["keep", "the", "<!--", "-->", "marker"]);
    fc.assert(
      fc.property(validPlanWith(title, plainTitle, plainFile), (plan) => {
        expect(readVisibleSteps(renderPlanBody(plan))).toEqual(expectedVisible(plan));
      }),
      { numRuns: 300 },
    );
  });

  const headingWords = ["see", "### Steps", "```mermaid", "below", "\n", "### Notes"];

  it("reads back the steps when the summary mentions the section headings", () => {
    const summary = fc
      .array(fc.constantFrom(...headingWords), { minLength: 1, maxLength: 6 })
      .map((parts) => `Summary ${parts.join(" ")}`);
    fc.assert(
      fc.property(validPlanWith(plainTitle, summary, plainFile), (plan) => {
        expect(readVisibleSteps(renderPlanBody(plan))).toEqual(expectedVisible(plan));
      }),
      { numRuns: 300 },
    );
  });

  it("reads back the steps when a step title mentions the section headings", () => {
    fc.assert(
      fc.property(validPlanWith(markupWords(headingWords), plainTitle, plainFile), (plan) => {
        expect(readVisibleSteps(renderPlanBody(plan))).toEqual(expectedVisible(plan));
      }),
      { numRuns: 300 },
    );
  });

  it("reads back deps when file names hold the separators", () => {
    const file = fc.constantFrom("src/a · b.ts", "docs/x — y.md", "a,b.ts", "plain.ts");
    fc.assert(
      fc.property(validPlanWith(plainTitle, plainTitle, file), (plan) => {
        expect(readVisibleSteps(renderPlanBody(plan))).toEqual(expectedVisible(plan));
      }),
      { numRuns: 300 },
    );
  });
});
