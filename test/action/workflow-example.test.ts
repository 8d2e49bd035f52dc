import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { z } from "zod";

const text = readFileSync("docs/workflow-example.yml", "utf8");
const workflowSchema = z.object({
  on: z.object({
    issue_comment: z.object({ types: z.array(z.string()) }),
    pull_request_review: z.object({ types: z.array(z.string()) }),
    workflow_run: z.object({ workflows: z.array(z.string()), types: z.array(z.string()) }),
  }),
  permissions: z.record(z.string(), z.string()),
  jobs: z.record(
    z.string(),
    z.object({
      if: z.string(),
      "runs-on": z.string(),
      concurrency: z.object({ group: z.string(), "cancel-in-progress": z.boolean() }),
      steps: z.array(z.object({ uses: z.string(), with: z.record(z.string(), z.string()) })),
    }),
  ),
});
const workflow = workflowSchema.parse(parse(text));
const job = Object.values(workflow.jobs)[0];
const inputs = Object.keys((parse(readFileSync("action.yml", "utf8")) as { inputs: Record<string, unknown> }).inputs);

describe("the example workflow (docs/workflow-example.yml)", () => {
  it("runs on new comments and submitted reviews", () => {
    expect(workflow.on.issue_comment.types).toEqual(["created"]);
    expect(workflow.on.pull_request_review.types).toEqual(["submitted"]);
  });

  it("follows the completed runs of the CI workflow it names, for failing checks", () => {
    expect(workflow.on.workflow_run).toEqual({ workflows: ["CI"], types: ["completed"] });
    expect(text).toMatch(/workflow_run:.*# .*name your CI workflow here/);
  });

  it("grants what Blueprint needs: push, comment, open pull requests, write its check runs, read jobs' logs", () => {
    expect(workflow.permissions).toEqual({
      contents: "write",
      issues: "write",
      "pull-requests": "write",
      checks: "write",
      actions: "read",
    });
  });

  it("skips bots' comments and passing CI, and runs one job at a time per issue or pull request, never cancelling a build", () => {
    expect(Object.keys(workflow.jobs)).toHaveLength(1);
    expect(job?.if).toBe(
      "github.event.workflow_run.conclusion == 'failure' || (!github.event.workflow_run && github.event.sender.type != 'Bot')",
    );
    for (const number of [
      "github.event.issue.number",
      "github.event.pull_request.number",
      "github.event.workflow_run.pull_requests[0].number",
    ])
      expect(job?.concurrency.group).toContain(number);
    expect(job?.concurrency["cancel-in-progress"]).toBe(false);
  });

  it("uses the Action with the model key from a secret, and only inputs action.yml declares", () => {
    const step = job?.steps[0];
    // No published release to point at: the README says how to fill in a copy and pin it to a commit.
    expect(step?.uses).toBe("your-org/blueprint@<full-commit-sha>");
    expect(readFileSync("README.md", "utf8")).toMatch(/`your-org\/blueprint`[^]*git rev-parse HEAD/);
    expect(step?.with["openai-api-key"]).toBe("${{ secrets.OPENAI_API_KEY }}");
    for (const name of Object.keys(step?.with ?? {})) expect(inputs).toContain(name);
  });

  it("appears verbatim in the README", () => {
    expect(readFileSync("README.md", "utf8")).toContain(text.trim());
  });
});
