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
      approvers: "write",
      feedback: "any-comment",
      follow_up: "build",
      resolve_threads: false,
      ci_fix: "suggest",
      ci_fix_attempts: 2,
      branch_prefix: "blueprint/",
      limits: {},
      network: "none",
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
        "approvers: codeowners",
        "feedback: command-only",
        "follow_up: plan",
        "resolve_threads: true",
        "ci_fix: build",
        "ci_fix_attempts: 1",
        "setup: npm ci",
        "test: npm test",
        "branch_prefix: bots/bp/",
        "commit_author: { name: Bot, email: bot@example.com }",
        "limits:",
        "  max_iterations: 80",
        "  max_minutes: 30",
        "  max_cost: 2.5",
        "prices:",
        "  gpt-4.1: { input: 2, cached_input: 0.5, output: 8 }",
        "  local-model: { input: 0, output: 0 }",
        "instructions: |",
        "  Use tabs.",
      ].join("\n"),
    );
    expect(config).toEqual({
      model: "gpt-4.1",
      min_permission: "maintain",
      require_other_approver: true,
      approvers: "codeowners",
      feedback: "command-only",
      follow_up: "plan",
      resolve_threads: true,
      ci_fix: "build",
      ci_fix_attempts: 1,
      setup: "npm ci",
      test: "npm test",
      branch_prefix: "bots/bp/",
      commit_author: { name: "Bot", email: "bot@example.com" },
      limits: { max_iterations: 80, max_minutes: 30, max_cost: 2.5 },
      prices: { "gpt-4.1": { input: 2, cached_input: 0.5, output: 8 }, "local-model": { input: 0, output: 0 } },
      instructions: "Use tabs.\n",
      network: "none",
    });
  });

  it("reports invalid YAML clearly, naming the file", () => {
    const message = problem("model: [unclosed\nfeedback: x");
    expect(message).toMatch(/^\.github\/blueprint\.yml is not valid YAML \(line 2, column 1\): /);
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
    expect(problem("limits:\n  max_cost: -1\n")).toContain("`limits.max_cost`");
    expect(problem("prices:\n  gpt-4.1: { input: 2 }\n")).toContain("`prices.gpt-4.1.output`");
    expect(problem("prices:\n  gpt-4.1: { input: 2, output: 8, cache: 1 }\n")).toContain("`prices.gpt-4.1.cache`");
  });

  it("refuses a branch prefix with .. or odd characters", () => {
    expect(problem("branch_prefix: ../main\n")).toContain("`branch_prefix`");
    expect(problem("branch_prefix: 'a b'\n")).toContain("`branch_prefix`");
  });

  it("reports a top-level value that is not a mapping", () => {
    expect(problem("- a\n- b\n")).toContain("(top level)");
    expect(problem("just text\n")).toContain("(top level)");
  });

  it("names the line and column of each problem", () => {
    const message = problem(
      ["model: gpt-4.1", "limits:", "  max_minutes: 30", "  max_iterations: -3", "approvers: admins", "modle: x"].join(
        "\n",
      ),
    );
    expect(message).toContain("`limits.max_iterations` (line 4, column 19): ");
    expect(message).toContain("`approvers` (line 5, column 12): ");
    expect(message).toContain("`modle` (line 6, column 1): unknown key");
    // A missing field points at the mapping that lacks it.
    expect(problem("commit_author:\n  name: Bot\n")).toContain("`commit_author.email` (line 2, column 3): ");
    // An unknown key inside a flow mapping, on the key itself.
    expect(problem("network: true\nlimits: { max_minutes: 5, max_iteration: 10 }\n")).toContain(
      "`limits.max_iteration` (line 2, column 27): unknown key",
    );
  });

  it("names the line and column of a YAML syntax error", () => {
    expect(problem("model: gpt-4.1\nfeedback: [any-comment\nsetup: npm ci\n")).toMatch(
      /is not valid YAML \(line 3, column \d+\): /,
    );
    expect(problem("model: a\nmodel: b\n")).toContain("is not valid YAML (line 2, column 1): Map keys must be unique");
  });

  it("reads `network:` as none (default), registries, true (= registries), false (= none) or an allow list of host, host:port, *.suffix and address:port", () => {
    expect(ok("network: none\n").network).toBe("none");
    expect(ok("network: registries\n").network).toBe("registries");
    expect(ok("network: true\n").network).toBe("registries");
    expect(ok("network: false\n").network).toBe("none");
    expect(
      ok('network:\n  allow: [registry.npmjs.org, "github.com:443", "*.example.com", "10.0.0.5:8080", "[::1]:4873"]\n')
        .network,
    ).toEqual({
      allow: [
        { kind: "host", host: "registry.npmjs.org", port: null },
        { kind: "host", host: "github.com", port: 443 },
        { kind: "suffix", suffix: "example.com", port: null },
        { kind: "address", address: "10.0.0.5", port: 8080 },
        { kind: "address", address: "::1", port: 4873 },
      ],
    });
  });

  it("refuses a bad `network:` in plain words, naming the entry and where it is", () => {
    expect(problem("network: some\n")).toContain(
      "`network` (line 1, column 10): use `none`, `registries`, `true` (registries), `false` (none) or `{ allow: [",
    );
    const message = problem('network:\n  allow:\n    - registry.npmjs.org\n    - "not a host"\n    - 10.0.0.5\n');
    expect(message).toContain("`network.allow.1` (line 4, column 7): `not a host` is not a host name");
    expect(message).toContain("`network.allow.2` (line 5, column 7): `10.0.0.5` is an address without a port");
    expect(problem("network: { allow: registry.npmjs.org }\n")).toContain("`network.allow`");
    expect(problem("network: { hosts: [a.example] }\n")).toMatch(/`network\.hosts` .*unknown key|`network\.allow`/);
  });

  it("lists several problems at once", () => {
    const message = problem("feedback: sometimes\nmin_permission: owner\n");
    expect(message.split("\n- ")).toHaveLength(3);
  });

  it("reads `labels:` as absent (the default names), true, false, or a map that renames a state's label or switches it off", () => {
    expect(ok(null).labels).toBeUndefined();
    expect(ok("labels: false\n").labels).toBe(false);
    expect(ok("labels: true\n").labels).toBe(true);
    expect(ok('labels: { built: "  shipped  ", failed: false }\n').labels).toEqual({ built: "shipped", failed: false });
  });

  it("refuses a bad `labels:` in plain words", () => {
    expect(problem("labels: { done: x }\n")).toContain("`labels.done` (line 1, column 11): unknown key");
    expect(problem('labels: { built: "Ship", failed: "ship" }\n')).toContain(
      '"ship" names two states; each state needs a label of its own',
    );
    expect(problem(`labels: { built: "${"x".repeat(51)}" }\n`)).toContain("`labels.built`");
    expect(problem("labels: some\n")).toContain("use `true` (the default names), `false` (no labels) or a map");
  });
});
