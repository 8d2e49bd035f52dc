import { describe, expect, it } from "vitest";
import { parseRepoConfig, DEFAULT_REPO_CONFIG } from "../../src/config/repo-config.js";

function ok(text: string | null) {
  const result = parseRepoConfig(text);
  if (!result.ok) throw new Error(`expected ok, got: ${result.message}`);
  return result.config;
}

function problem(text: string): string {
  const result = parseRepoConfig(text);
  if (result.ok) throw new Error("expected the config to be rejected");
  return result.message;
}

describe("parseRepoConfig", () => {
  it("gives the defaults for a missing, empty, blank or comment-only file", () => {
    const expected = {
      require_other_approver: false,
      feedback: "any-comment",
      branch_prefix: "blueprint/",
      limits: {},
      network: false,
    };
    expect(DEFAULT_REPO_CONFIG).toEqual(expected);
    expect(ok(null)).toEqual(expected);
    expect(ok("")).toEqual(expected);
    expect(ok("  \n\n")).toEqual(expected);
    expect(ok("# nothing configured yet\n")).toEqual(expected);
  });

  it("reads a full configuration", () => {
    const config = ok(
      [
        "model: gpt-4.1",
        "min_permission: maintain",
        "require_other_approver: true",
        "feedback: command-only",
        "setup: npm ci",
        "test: npm test",
        "branch_prefix: bots/bp/",
        "commit_author: { name: Bot, email: bot@example.com }",
        "limits:",
        "  max_iterations: 80",
        "  max_minutes: 30",
        "instructions: |",
        "  Use tabs.",
      ].join("\n"),
    );
    expect(config).toEqual({
      model: "gpt-4.1",
      min_permission: "maintain",
      require_other_approver: true,
      feedback: "command-only",
      setup: "npm ci",
      test: "npm test",
      branch_prefix: "bots/bp/",
      commit_author: { name: "Bot", email: "bot@example.com" },
      limits: { max_iterations: 80, max_minutes: 30 },
      instructions: "Use tabs.\n",
      network: false,
    });
  });

  it("reports invalid YAML clearly, naming the file", () => {
    const message = problem("model: [unclosed\nfeedback: x");
    expect(message).toMatch(/^\.github\/blueprint\.yml is not valid YAML: /);
    expect(message.split("\n")).toHaveLength(1);
  });

  it("names an unknown top-level key", () => {
    const message = problem("modle: gpt-4.1\n");
    expect(message).toMatch(/^\.github\/blueprint\.yml has problems:/);
    expect(message).toContain("modle");
  });

  it("names an unknown key inside limits", () => {
    // A typo here would otherwise silently drop the limit the maintainer meant to set.
    const result = parseRepoConfig("limits:\n  max_iteration: 10\n");
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toContain("max_iteration");
  });

  it("reports wrong types with the field's path", () => {
    expect(problem("require_other_approver: yes please\n")).toContain("`require_other_approver`");
    expect(problem("limits:\n  max_iterations: -3\n")).toContain("`limits.max_iterations`");
    expect(problem("limits:\n  max_minutes: 1.5\n")).toContain("`limits.max_minutes`");
    expect(problem("min_permission: owner\n")).toContain("`min_permission`");
    expect(problem("feedback: sometimes\n")).toContain("`feedback`");
    expect(problem("commit_author:\n  name: Bot\n  email: not-an-email\n")).toContain("`commit_author.email`");
  });

  it("refuses a branch prefix with .. or odd characters", () => {
    expect(problem("branch_prefix: ../main\n")).toContain("`branch_prefix`");
    expect(problem("branch_prefix: 'a b'\n")).toContain("`branch_prefix`");
  });

  it("reports a top-level value that is not a mapping", () => {
    expect(problem("- a\n- b\n")).toContain("(top level)");
    expect(problem("just text\n")).toContain("(top level)");
  });

  it("lists several problems at once", () => {
    const message = problem("feedback: sometimes\nmin_permission: owner\n");
    expect(message.split("\n- ")).toHaveLength(3);
  });
});
