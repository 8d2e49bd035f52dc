import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { gitIn, tempDir } from "../helpers/git-repo.js";

/**
 * The repository test/fixtures/eval/tiny-math.jsonl's instances are about, built the same way every
 * time (fixed names and dates), so its commit is the base_commit the fixture records.
 */
export const TINY_BASE_COMMIT = "6bd1377860aa9cae2a87f82809595b5b12f9041f";
const TINY_FILES: Record<string, string> = {
  "package.json": `${JSON.stringify({ name: "tiny-math", version: "1.0.0", license: "MIT", scripts: { test: "node --test test/" } }, null, 2)}\n`,
  "index.js": "exports.sum = (list) => list.reduce((total, value) => total + value);\n",
  "test/sum.test.js":
    'const test = require("node:test");\nconst assert = require("node:assert");\nconst { sum } = require("..");\n\ntest("sums numbers", () => {\n  assert.strictEqual(sum([1, 2, 3]), 6);\n});\n',
  ".gitignore": "node_modules/\n",
};

/** DIR/blueprint-eval__tiny-math, a git repository whose main is the fixture's base_commit; returns DIR. */
export function tinyRepos(): string {
  const dir = tempDir("blueprint-eval-repos-");
  const repo = path.join(dir, "blueprint-eval__tiny-math");
  for (const [file, text] of Object.entries(TINY_FILES)) {
    mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
    writeFileSync(path.join(repo, file), text);
  }
  const dated = { GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z", GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z" };
  const saved = { ...process.env };
  Object.assign(process.env, dated);
  try {
    gitIn(repo, ["init", "-q", "-b", "main"]);
    gitIn(repo, ["add", "-A"]);
    gitIn(repo, ["commit", "-q", "-m", "tiny-math 1.0.0"]);
  } finally {
    for (const name of Object.keys(dated)) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  }
  return dir;
}
