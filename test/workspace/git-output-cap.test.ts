import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { untrustedGit } from "../../src/workspace/untrusted-git.js";
import { tempDir } from "../helpers/git-repo.js";

/** Git's output from a tree the agent wrote is read up to a limit: past it git is stopped, never held whole. */
describe("untrustedGit's output cap", () => {
  const tree = () => {
    const dir = tempDir("bp-git-cap-");
    execFileSync("git", ["init", "-q"], { cwd: dir });
    writeFileSync(path.join(dir, "big.txt"), "x".repeat(200_000));
    return dir;
  };

  it("stops git past maxOutputBytes, marks the result truncated and keeps only the first bytes", async () => {
    const git = untrustedGit({ discoverFrom: tree() }, { maxOutputBytes: 10_000 });
    const result = await git.run(["grep", "-h", "--untracked", "x"]);
    expect(result.truncated).toBe(true);
    expect(result.code).toBeNull();
    expect(result.stdout).toBe("x".repeat(10_000));
    await expect(git.raw(["grep", "-h", "--untracked", "x"])).rejects.toThrow(
      "git grep printed more than 10000 bytes and was stopped",
    );
  });

  it("reads output under the cap whole", async () => {
    const result = await untrustedGit({ discoverFrom: tree() }, { maxOutputBytes: 300_000 }).run([
      "grep",
      "-h",
      "--untracked",
      "x",
    ]);
    expect(result).toEqual({ code: 0, stdout: `${"x".repeat(200_000)}\n`, stderr: "" });
  });
});
