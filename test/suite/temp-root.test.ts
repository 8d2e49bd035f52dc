import { execFileSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

describe("the suite's temporary files", () => {
  it("go in the run's own directory, for the test process and what it starts, so the run can remove them", () => {
    const root = os.tmpdir();
    expect(path.basename(root)).toMatch(/^blueprint-suite-/);
    // One directory for the run, not one inside another for each of vitest's projects.
    expect(path.basename(path.dirname(root))).not.toMatch(/^blueprint-suite-/);
    const child = execFileSync(process.execPath, ["-p", "require('node:os').tmpdir()"], { encoding: "utf8" });
    expect(child.trim()).toBe(root);
  });
});
