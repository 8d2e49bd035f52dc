import { describe, expect, it } from "vitest";
import { filesAt, untrustedGit } from "../../src/workspace/untrusted-git.js";
import { readRepoInstructions } from "../../src/workflow/repo-instructions.js";
import { createBareRepo } from "../helpers/git-repo.js";

function repository() {
  const repo = createBareRepo({
    "AGENTS.md": "Run npm test.\n",
    "src/api/AGENTS.md": "Keep handlers small.\n",
    "src/api/handler.ts": "export {};\n",
    "docs/AGENTS.md/readme.txt": "a directory named AGENTS.md\n",
    "odd/*/AGENTS.md": "a directory named *\n",
    "odd/x/AGENTS.md": "not matched by a literal *\n",
  });
  return { repo, git: untrustedGit({ gitDir: repo.bare }) };
}

describe("filesAt", () => {
  it("says in one call which paths are files at a ref: nested ones, not directories, names taken literally", async () => {
    const { git } = repository();
    const asked = ["AGENTS.md", "src/AGENTS.md", "src/api/AGENTS.md", "docs/AGENTS.md", "odd/*/AGENTS.md", "gone.md"];
    expect(await filesAt(git, "refs/heads/main", asked)).toEqual(
      new Set(["AGENTS.md", "src/api/AGENTS.md", "odd/*/AGENTS.md"]),
    );
    expect(await filesAt(git, "refs/heads/main", ["odd/?/AGENTS.md"])).toEqual(new Set());
    expect(await filesAt(git, "refs/heads/no-such-branch", ["AGENTS.md"])).toEqual(new Set());
    expect(await filesAt(git, "refs/heads/main", [])).toEqual(new Set());
  });
});

describe("readRepoInstructions with the files present", () => {
  it("reads only the instruction files that are there, and finds the same as reading every candidate", async () => {
    const { git } = repository();
    const reads: string[] = [];
    const read = async (file: string) => {
      reads.push(file);
      try {
        return await git.raw(["show", `refs/heads/main:${file}`]);
      } catch {
        return null;
      }
    };
    const paths = ["src/api/handler.ts", "src/api/routes/users.ts", "lib/index.ts"];
    const everyCandidate = await readRepoInstructions(read, paths, async (files) => new Set(files));
    const readEvery = reads.splice(0);
    const onlyPresent = await readRepoInstructions(read, paths, (files) => filesAt(git, "refs/heads/main", files));
    expect(onlyPresent).toEqual(everyCandidate);
    expect(onlyPresent.files.map((file) => file.path)).toEqual(["AGENTS.md", "src/api/AGENTS.md"]);
    expect(readEvery.length).toBeGreaterThan(4);
    expect(reads).toEqual(["AGENTS.md", "src/api/AGENTS.md"]);
  });

  it("takes no directory named AGENTS.md for instructions (`git show` would print its listing)", async () => {
    const { git } = repository();
    const read = (file: string) => git.raw(["show", `refs/heads/main:${file}`]).catch(() => null);
    const found = await readRepoInstructions(read, ["docs/AGENTS.md/readme.txt"], (files) =>
      filesAt(git, "refs/heads/main", files),
    );
    expect(found.files.map((file) => file.path)).toEqual(["AGENTS.md"]);
  });

  it("falls back to CLAUDE.md when no AGENTS.md is there, reading nothing else", async () => {
    const repo = createBareRepo({ "CLAUDE.md": "Use pnpm.\n", "lib/x.js": "\n" });
    const git = untrustedGit({ gitDir: repo.bare });
    const reads: string[] = [];
    const read = async (file: string) => {
      reads.push(file);
      return git.raw(["show", `refs/heads/main:${file}`]).catch(() => null);
    };
    const found = await readRepoInstructions(read, ["lib/x.js"], (files) => filesAt(git, "refs/heads/main", files));
    expect(found.files).toEqual([{ path: "CLAUDE.md", text: "Use pnpm.\n" }]);
    expect(reads).toEqual(["CLAUDE.md"]);
  });
});
