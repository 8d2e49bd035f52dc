import { describe, expect, it } from "vitest";
import { MAX_PATH_LENGTH, checkRepoRelativePath, validatePlan } from "../../src/plan/validate.js";

const errorsFor = (file: string) => {
  const result = validatePlan({ title: "T", summary: "S", steps: [{ id: "S1", title: "Do it", files: [file] }] });
  return result.ok ? [] : result.errors;
};

describe("file paths in a plan", () => {
  it.each(["\\etc\\passwd", "\\\\server\\share\\x", "C:\\x", "c:/x", "C:x", "D:"])(
    "rejects the Windows-style absolute path %s, saying what to send instead",
    (file) => {
      expect(errorsFor(file)).toEqual([
        `step S1: file "${file}" is absolute (a Windows drive or backslash path); use a path relative to the repository root with forward slashes, like "src/index.ts"`,
      ]);
    },
  );

  it.each(["src\\a.ts", "a\\b\\..\\c.ts", "~user/x"])(
    "accepts the relative path %s (backslashes count as separators)",
    (file) => {
      expect(checkRepoRelativePath(file)).toBeNull();
    },
  );

  it("still reads backslash escapes as leaving the repository", () => {
    expect(errorsFor("..\\..\\x")).toEqual(['step S1: file "..\\..\\x" leaves the repository']);
  });

  it("accepts a path of exactly the maximum length and refuses one character more, by its length", () => {
    const longest = "a/".repeat(MAX_PATH_LENGTH / 2 - 1) + "bc";
    expect(longest).toHaveLength(MAX_PATH_LENGTH);
    expect(checkRepoRelativePath(longest)).toBeNull();
    const [error] = errorsFor(`${longest}d`);
    expect(error).toBe(
      `step S1: file "${"a/".repeat(50)}…" is too long (${MAX_PATH_LENGTH + 1} characters; at most ${MAX_PATH_LENGTH} are allowed); use a short path relative to the repository root`,
    );
  });

  it("refuses a 1 MB ../ chain by its length, before looking at where it leads", () => {
    expect(checkRepoRelativePath("../".repeat(350_000))).toMatch(/^is too long \(1050000 characters/);
  });
});
