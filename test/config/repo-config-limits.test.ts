import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { REPO_CONFIG_PATH, parseRepoConfig } from "../../src/config/repo-config.js";
import { limitsFor } from "../../src/workflow/limits.js";

function problem(text: string): string {
  const read = parseRepoConfig(text);
  if (read.ok) throw new Error("expected the config to be rejected");
  return read.message;
}

let warnings: MockInstance<typeof process.emitWarning>;
beforeEach(() => {
  warnings = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
});
afterEach(() => {
  warnings.mockRestore();
});

describe("parseRepoConfig limits", () => {
  it("rejects a file over 64 000 characters, naming the file and the limit", () => {
    const message = problem(`instructions: ${"a".repeat(70_000)}`);
    expect(message).toContain(REPO_CONFIG_PATH);
    expect(message).toContain("64000");
  });

  it("rejects nesting deeper than 20 levels in flow and block style, before the YAML library composes it", () => {
    for (const text of [
      "[".repeat(5000) + "]".repeat(5000),
      "[".repeat(5000),
      "- ".repeat(21) + "x",
      `a: ${"{b: ".repeat(30)}1${"}".repeat(30)}`,
    ]) {
      const message = problem(text);
      expect(message).toContain(REPO_CONFIG_PATH);
      expect(message).toContain("20 levels");
    }
  });

  it("still reads nesting within the limit", () => {
    expect(problem("- ".repeat(20) + "x")).toMatch(/has problems/);
    expect(
      parseRepoConfig("limits:\n  max_iterations: 3\ncommit_author: { name: Bot, email: bot@example.com }\n").ok,
    ).toBe(true);
  });

  it("prints no warning for an unknown tag, and reads its value", () => {
    const read = parseRepoConfig("model: !custom gpt-x\n");
    expect(warnings).not.toHaveBeenCalled();
    expect(read.ok && read.config.model).toBe("gpt-x");
  });
});

describe("limits: in .github/blueprint.yml", () => {
  const own = { maxIterations: 40, maxWallTimeMs: 30 * 60_000, maxTokens: 500_000 };
  const limitsOf = (text: string) => {
    const read = parseRepoConfig(text);
    if (!read.ok) throw new Error(read.message);
    return limitsFor(own, read.config);
  };

  it("lower the App's own limits", () => {
    expect(limitsOf("limits:\n  max_iterations: 5\n  max_minutes: 2\n  max_tokens: 1000\n")).toEqual({
      maxIterations: 5,
      maxWallTimeMs: 120_000,
      maxTokens: 1000,
    });
  });

  it("never raise them: a repository cannot buy itself more iterations, time or tokens", () => {
    expect(limitsOf("limits:\n  max_iterations: 500\n  max_minutes: 240\n  max_tokens: 90000000\n")).toEqual(own);
    expect(limitsOf("instructions: hi\n")).toEqual(own);
  });
});
