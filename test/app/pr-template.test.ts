import { describe, expect, it } from "vitest";
import { commentPayload } from "../helpers/app.js";
import { useAppFixture } from "../helpers/app-fixture.js";
import { samplePlan, type ModelRequest, type Script } from "../helpers/model-server.js";
import { templateHeadings } from "../../src/workflow/build/template-sections.js";

const TEMPLATE = [
  "## Summary",
  "<!-- What does this pull request change, and why? -->",
  "",
  "## Changes",
  "",
  "## How it was tested",
  "",
  "## Checklist",
  "- [ ] I tested this by hand",
  "- [ ] The changelog is updated",
  "",
].join("\n");
const FILES = {
  "README.md": "# Hello\n",
  "src/client.js": "export async function get(url) {\n  return fetch(url);\n}\n",
  ".github/pull_request_template.md": TEMPLATE,
};

const plan = samplePlan({
  verification: ["test -f src/retry.js"],
  steps: [
    { id: "S1", title: "Add a retry helper", details: "Create src/retry.js", files: ["src/retry.js"], deps: [] },
    { id: "S2", title: "Use the helper", details: "Edit src/client.js", files: ["src/client.js"], deps: ["S1"] },
    { id: "S3", title: "Document retries", details: "README", files: ["README.md"], deps: [] },
  ],
});

const write = (path: string, content: string) => ({
  toolCalls: [{ name: "write_file", arguments: { path, content } }],
});
const complete = (id: string) => ({
  toolCalls: [{ name: "complete_step", arguments: { step_id: id, summary: `did ${id}` } }],
});
/** The three steps' conversations: each writes one file with a marker the diff must carry. */
const steps: Script = [
  write("src/retry.js", "export const retry = (fn) => fn(); // EARLY-STEP-MARKER\n"),
  complete("S1"),
  write("src/client.js", "import { retry } from './retry.js';\nexport const get = (url) => retry(() => fetch(url));\n"),
  complete("S2"),
  write("README.md", "# Hello\n\nRequests are retried. LAST-STEP-MARKER\n"),
  complete("S3"),
];

const FILLED = [
  "## Summary",
  "Requests made by the HTTP client are now retried.",
  "",
  "## Changes",
  "- `src/retry.js`: a retry helper",
  "- `src/client.js` uses it; the README says so",
  "",
  "## How it was tested",
  "`test -f src/retry.js` passed.",
  "",
  "## Checklist",
  "- [x] I tested this by hand",
  "- [ ] The changelog is updated",
].join("\n");

const headingsOf = (markdown: string) => templateHeadings(markdown).map((heading) => heading.text);
const textOf = (request: ModelRequest | undefined) =>
  (request?.messages ?? []).map((message) => String(message.content)).join("\n");

describe("the pull request follows the repository's template", () => {
  const fx = useAppFixture({ files: FILES });
  const warnings: Array<{ message: string; reason: unknown }> = [];
  // Kept so that a build that fails (it did once, under CI load) says why instead of only "no pull request".
  const errors: string[] = [];
  const log = {
    info: () => undefined,
    error: (object: object, message?: string) =>
      void errors.push(`${message ?? ""}: ${String((object as { err?: unknown }).err ?? JSON.stringify(object))}`),
    warn: (object: object, message?: string) =>
      void warnings.push({ message: message ?? "", reason: (object as { reason?: unknown }).reason }),
  };
  const build = async (answer: Script[number]) => {
    warnings.length = 0;
    errors.length = 0;
    await fx.start([...steps, answer], {}, { deps: { log } });
    fx.seedPlan(plan);
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));
    expect(fx.github.pulls, `the build logged: ${errors.join("; ") || "no error"}`).toHaveLength(1);
    return fx.github.pulls[0]!.body;
  };

  it("fills the template's sections in order from the whole branch diff, with the plan below and checkboxes unticked", async () => {
    const body = await build({ content: `\`\`\`markdown\n${FILLED}\n\`\`\`` });

    // One more conversation after the steps: no tools, given the template, the plan and every step's changes.
    expect(fx.model.requests).toHaveLength(7);
    const request = fx.model.requests[6];
    expect(request?.tools).toBeUndefined();
    const asked = textOf(request);
    expect(asked).toContain("## How it was tested");
    expect(asked).toContain("Add a retry helper");
    expect(asked).toContain("EARLY-STEP-MARKER");
    expect(asked).toContain("LAST-STEP-MARKER");
    expect(asked).toContain("`test -f src/retry.js`: passed");

    // The template's headings open the body, in order, filled in; the plan, the commits and the checks follow.
    expect(headingsOf(body).slice(0, 4)).toEqual(["Summary", "Changes", "How it was tested", "Checklist"]);
    expect(body).toContain("Requests made by the HTTP client are now retried.");
    expect(body).toContain("- [ ] I tested this by hand");
    expect(body).not.toContain("[x]");
    expect(body).not.toContain("```markdown");
    const [filled, rest] = [body.slice(0, body.indexOf("Closes #1")), body.slice(body.indexOf("Closes #1"))];
    expect(filled).toContain("## Checklist");
    expect(rest).toContain(`## ${plan.title}`);
    expect(rest).toContain("### Build report");
    expect(rest).toContain("test -f src/retry.js");
    expect(warnings).toEqual([]);
  });

  it("gives the writer each step's details with their line breaks, each step's summary, and a failed command's last lines", async () => {
    const details = "Create src/retry.js:\n```js\nexport const retry = (fn) => fn();\n```\nKeep it small.";
    const failing =
      "for i in $(seq 1 80); do echo \"noise $i\"; done; echo 'FAILED: retry.test.js expected 3 calls, got 1'; exit 1";
    await fx.start([...steps, { content: FILLED }], {}, { deps: { log } });
    fx.seedPlan({
      ...plan,
      verification: [failing],
      steps: plan.steps.map((step) => (step.id === "S1" ? { ...step, details } : step)),
    });
    await fx.app.deliver("issue_comment", commentPayload({ body: "/build", cloneUrl: fx.repo.url }));

    const asked = textOf(fx.model.requests[6]);
    expect(asked).toContain(`## S1: Add a retry helper (done in `);
    expect(asked).toContain(details);
    expect(asked).toContain("What the agent did: did S1");
    expect(asked).toContain("What the agent did: did S3");
    expect(asked).toMatch(
      /failed \(exit 1\), its output ending:\n```\n[\s\S]*noise 80\nFAILED: retry\.test\.js expected 3 calls, got 1\n```/,
    );
    expect(asked).not.toContain("noise 40\n");
  });

  it("falls back to the template with its headings and the plan's summary when the answer drops a heading", async () => {
    const body = await build({ content: FILLED.replace("## How it was tested\n", "") });

    expect(headingsOf(body).slice(0, 4)).toEqual(["Summary", "Changes", "How it was tested", "Checklist"]);
    const summary = body.slice(body.indexOf("## Summary"), body.indexOf("## Changes"));
    expect(summary).toContain(plan.summary);
    expect(body).not.toContain("Requests made by the HTTP client are now retried.");
    expect(body).toContain("- [ ] I tested this by hand");
    expect(body).toContain(`## ${plan.title}`);
    expect(warnings).toHaveLength(1);
    expect(String(warnings[0]?.reason)).toContain("## How it was tested");
  });

  it("falls back the same way when the model call fails, and the pull request is still opened", async () => {
    const body = await build({ status: 400 });

    expect(headingsOf(body).slice(0, 4)).toEqual(["Summary", "Changes", "How it was tested", "Checklist"]);
    expect(body).toContain(plan.summary);
    expect(body).toContain("### Build report");
    expect(String(warnings[0]?.reason)).toContain("the model call failed");
  });

  it("leaves the description as it was without a template: no extra model call", async () => {
    fx.createRepo({
      "README.md": "# Hello\n",
      "src/client.js": "x\n",
      ".github/PULL_REQUEST_TEMPLATE/feature.md": TEMPLATE,
    });
    const body = await build({ content: FILLED });

    expect(fx.model.requests).toHaveLength(6);
    expect(body.startsWith(`Closes #1\n\n## ${plan.title}\n\n`)).toBe(true);
    expect(body).not.toContain("## Summary");
    expect(warnings).toEqual([]);
  });
});
