import { describe, expect, it } from "vitest";
import { runProcess } from "../../src/workspace/process-pool.js";
import { git, GitError } from "../../src/workspace/git.js";
import { tempDir } from "../helpers/git-repo.js";

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

describe("runProcess", () => {
  it("gives the exit code, stdout and stderr, with exactly the environment it was handed", async () => {
    const result = await runProcess("sh", ["-c", 'echo "out $ONLY_THIS ${HOME:-no-home}"; echo err >&2; exit 3'], { cwd: tempDir(), env: { ...env, ONLY_THIS: "x" } });
    expect(result).toEqual({ code: 3, stdout: "out x no-home\n", stderr: "err\n", failure: null });
  });

  it("runs in the directory it was given", async () => {
    const dir = tempDir();
    expect((await runProcess("pwd", [], { cwd: dir, env })).stdout.trim()).toBe(dir);
  });

  it("answers, without throwing, for a program that does not exist and for output over the cap", async () => {
    const missing = await runProcess("no-such-program-blueprint", [], { cwd: tempDir(), env });
    expect(missing.code).toBeNull();
    expect(missing.failure).toBe("ENOENT");
    const flood = await runProcess("sh", ["-c", "head -c 100000 /dev/zero"], { cwd: tempDir(), env, maxBuffer: 1000 });
    expect(flood.code).toBeNull();
    expect(flood.failure).toMatch(/MAXBUFFER/);
  });

  it("keeps many calls apart when they run at once", async () => {
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => runProcess("sh", ["-c", `echo ${i}`], { cwd: tempDir(), env })));
    expect(results.map((r) => r.stdout.trim())).toEqual(Array.from({ length: 40 }, (_, i) => String(i)));
  });
});

describe("git", () => {
  it("resolves with stdout and rejects with git's own message", async () => {
    const dir = tempDir();
    await git(dir, env).raw(["init", "-q", "-b", "main"]);
    expect((await git(dir, env).raw(["symbolic-ref", "HEAD"])).trim()).toBe("refs/heads/main");
    const failure = await git(dir, env).raw(["rev-parse", "--verify", "nope^{commit}"]).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(GitError);
    expect((failure as GitError).message).toMatch(/^fatal: /);
    expect((failure as GitError).exitCode).toBe(128);
  });
});
