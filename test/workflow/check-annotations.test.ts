import { describe, expect, it } from "vitest";
import { annotationsFrom, MAX_ANNOTATIONS } from "../../src/workflow/surfaces/check-annotations.js";

const ROOT = "/work/tree";
const FILES = new Set(["src/a.ts", "src/b.py", "lib/c.go", "test/d.test.ts"]);
const exists = (file: string) => FILES.has(file);
const found = (output: string) =>
  annotationsFrom(output, "npm test", ROOT, exists).map((note) => `${note.path}:${note.line} ${note.message}`);

describe("annotations from a failed command's output", () => {
  it("reads path:line:col, path:line and path(line,col), relative or under the repository's root, colours stripped", () => {
    const output = [
      "src/a.ts:12:5 - error TS2322: Type 'string' is not assignable",
      "src/a.ts(40,2): error TS2304: Cannot find name 'x'.",
      "\u001b[31m ❯ test/d.test.ts:7:11\u001b[39m",
      "./lib/c.go:3: undefined: Foo",
      `  at run (${ROOT}/src/b.py:9:1)`,
    ].join("\n");
    expect(found(output)).toEqual([
      "src/a.ts:12 error TS2322: Type 'string' is not assignable",
      "src/a.ts:40 error TS2304: Cannot find name 'x'.",
      "test/d.test.ts:7 ❯ test/d.test.ts:7:11",
      "lib/c.go:3 undefined: Foo",
      `src/b.py:9 at run (${ROOT}/src/b.py:9:1)`,
    ]);
  });

  it("names only files inside the repository that exist, once per line", () => {
    const output = [
      "/etc/passwd:1:1 outside",
      "../other/src/a.ts:2:1 outside",
      `${ROOT}/../src/a.ts:3:1 outside`,
      "src/missing.ts:4:1 gone",
      "12:05:33 a time, not a file",
      "src/a.ts:5:1 first",
      "src/a.ts:5:9 again",
    ].join("\n");
    expect(found(output)).toEqual(["src/a.ts:5 first"]);
  });

  it("stops at a bounded number of annotations", () => {
    const output = Array.from({ length: 80 }, (_, i) => `src/a.ts:${i + 1}:1 failure ${i}`).join("\n");
    expect(annotationsFrom(output, "npm test", ROOT, exists)).toHaveLength(MAX_ANNOTATIONS);
  });
});
