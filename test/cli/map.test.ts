import { beforeAll, describe, expect, it } from "vitest";
import { createBareRepo } from "../helpers/git-repo.js";
import { assertCliBuilt, blueprint } from "./support.js";

const FILES = {
  "README.md": "# Hello\n",
  "src/http.ts":
    "export async function getJson(url: string): Promise<unknown> {\n  return (await fetch(url)).json();\n}\n",
  "src/users.ts":
    'import { getJson } from "./http";\n\nexport function loadUsers() {\n  return getJson("/users");\n}\n',
};

describe("blueprint map", () => {
  beforeAll(() => assertCliBuilt());

  it("prints the repository map from the built CLI, parsed on its worker threads, most-used first", async () => {
    const repo = createBareRepo(FILES);
    const run = await blueprint(["map"], { cwd: repo.seed });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^Repository map: 3 tracked files/);
    expect(run.stdout).not.toContain("regex outline");
    const body = run.stdout.split("\n\n")[1] ?? "";
    expect(body.split("\n").slice(0, 2)).toEqual([
      "src/http.ts",
      "   1│export async function getJson(url: string): Promise<unknown> {",
    ]);
  });

  it("takes focus words and a token budget, and refuses a budget out of range", async () => {
    const repo = createBareRepo(FILES);
    const focused = await blueprint(["map", "loadUsers", "--tokens", "256"], { cwd: repo.seed });
    expect(focused.code).toBe(0);
    expect(focused.stdout).toContain("(focus: loadUsers)");
    expect((focused.stdout.split("\n\n")[1] ?? "").startsWith("src/users.ts\n")).toBe(true);
    const wrong = await blueprint(["map", "--tokens", "12"], { cwd: repo.seed });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("--tokens takes a whole number from 256 to 16384.");
    const misplaced = await blueprint(["status", "--tokens", "512"], { cwd: repo.seed });
    expect(misplaced.code).toBe(2);
  });
});
