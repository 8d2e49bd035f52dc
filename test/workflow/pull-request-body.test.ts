import { describe, expect, it } from "vitest";
import { planSchema } from "../../src/plan/schema.js";
import { renderPullRequestBody } from "../../src/workflow/build/report.js";
import { samplePlan } from "../helpers/model-server.js";

describe("the pull request body", () => {
  // The plan's words are the model's, steered by an issue anyone may write.
  const plan = planSchema.parse(
    samplePlan({
      title: "Fix #7 for @octocat",
      summary:
        "Wrap requests in a retry helper. Fixes #99, closes other/repo#3 and resolves https://github.com/o/r/issues/5; cc @maintainers.\n\n```js\n@decorator\n// fixes #12 in a comment\n```",
    }),
  );
  const body = renderPullRequestBody({
    issueNumber: 1,
    plan,
    report: "#### Verification\n\nthanks @someone, fixed #4",
  });

  it("closes only the issue Blueprint names, and pings no one from the plan or the report", () => {
    expect(body.startsWith("Closes #1\n\n")).toBe(true);
    const prose = body.replace(/```[\s\S]*?```/g, "");
    expect(prose.match(/\b(close[sd]?|fix(e[sd])?|resolve[sd]?)\s*:?\s+(\S+\/\S+)?#\d/gi)).toEqual(["Closes #1"]);
    expect(body).not.toMatch(/(^|[^\w`@/.-])@(octocat|maintainers|someone)\b/m);
    expect(body).toContain("F\u200bixes #99");
    expect(body).toContain("@\u200bmaintainers");
    expect(body).toContain("@\u200bsomeone");
  });

  it("keeps code blocks as written (a decorator is no mention there)", () => {
    expect(body).toContain("```js\n@decorator\n// fixes #12 in a comment\n```");
  });
});
