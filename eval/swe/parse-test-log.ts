import path from "node:path";
import { z } from "zod";
import type { TestRunner } from "./instance.js";

export type TestStatus = "passed" | "failed" | "skipped";
/**
 * Test id → status. Ids are `<file> > <suite> > … > <title>`; the file is left out when the runner does not report it.
 */
export type TestResults = Map<string, TestStatus>;

/**
 * Reads a test run's stdout with the parser for its runner. `root` makes reported absolute file
 * paths relative. A test reported twice (same title in one file) counts as failed if either failed,
 * as SWE-bench's parsers keep the worst status.
 */
export function parseTestLog(runner: TestRunner, stdout: string, root: string): TestResults {
  switch (runner) {
    case "mocha":
      return parseMochaJson(stdout, root);
    case "jest":
    case "vitest":
      return parseJestJson(stdout, root);
    case "node-test":
    case "tap":
      return parseTap(stdout);
  }
}

function record(results: TestResults, id: string, status: TestStatus): void {
  const earlier = results.get(id);
  if (earlier === "failed" || (earlier === "passed" && status === "skipped")) return;
  results.set(id, status);
}

function testId(file: string | undefined, titles: string[], root: string): string {
  const title = titles.filter((part) => part !== "").join(" > ");
  if (!file) return title;
  const relative = path.isAbsolute(file) ? path.relative(root, file) : file;
  return `${relative.split(path.sep).join("/")} > ${title}`;
}

/**
 * The last JSON object in `text` that starts a line and matches `schema`: reporters print their
 * JSON at the end, after whatever the tests themselves logged.
 */
function lastJson<T>(text: string, schema: z.ZodType<T>): T | null {
  const starts: number[] = [];
  for (let index = text.indexOf("{"); index !== -1; index = text.indexOf("{", index + 1)) {
    if (index === 0 || text[index - 1] === "\n") starts.push(index);
  }
  for (const start of starts.reverse()) {
    const end = text.lastIndexOf("}");
    try {
      const parsed = schema.safeParse(JSON.parse(text.slice(start, end + 1)));
      if (parsed.success) return parsed.data;
    } catch {
      // not the reporter's object; an earlier line may be
    }
  }
  return null;
}

const mochaTest = z.looseObject({ title: z.string(), fullTitle: z.string(), file: z.string().optional() });
const mochaReport = z.looseObject({
  stats: z.looseObject({}),
  passes: z.array(mochaTest),
  failures: z.array(mochaTest),
  pending: z.array(mochaTest).default([]),
});

/** `mocha --reporter json` (run `_mocha` on mocha < 4, whose `mocha` wrapper loses a piped stdout). */
function parseMochaJson(stdout: string, root: string): TestResults {
  const report = lastJson(stdout, mochaReport);
  if (!report) throw new Error("no mocha JSON report in the test output (is the test command using --reporter json?)");
  const results: TestResults = new Map();
  for (const test of report.passes) record(results, testId(test.file, [test.fullTitle], root), "passed");
  for (const test of report.pending) record(results, testId(test.file, [test.fullTitle], root), "skipped");
  for (const test of report.failures) record(results, testId(test.file, [test.fullTitle], root), "failed");
  return results;
}

const jestAssertion = z.looseObject({ ancestorTitles: z.array(z.string()), title: z.string(), status: z.string() });
const jestReport = z.looseObject({
  testResults: z.array(
    z.looseObject({
      name: z.string().optional(),
      testFilePath: z.string().optional(),
      assertionResults: z.array(jestAssertion),
    }),
  ),
});

/** `jest --json` and `vitest run --reporter=json` (same shape). */
function parseJestJson(stdout: string, root: string): TestResults {
  const report = lastJson(stdout, jestReport);
  if (!report)
    throw new Error(
      "no jest/vitest JSON report in the test output (is the test command using --json / --reporter=json?)",
    );
  const results: TestResults = new Map();
  for (const file of report.testResults) {
    for (const test of file.assertionResults) {
      const status: TestStatus = test.status === "passed" ? "passed" : test.status === "failed" ? "failed" : "skipped";
      record(results, testId(file.name ?? file.testFilePath, [...test.ancestorTitles, test.title], root), status);
    }
  }
  return results;
}

const TAP_RESULT = /^( *)(not ok|ok)\b\s*\d*\s*(?:-\s*)?(.*)$/;
const TAP_SUBTEST = /^( *)# Subtest: (.*)$/;

/**
 * TAP 13/14 as `node --test --test-reporter=tap` and tap print it: subtests are indented four
 * spaces a level; only leaves count as tests (a suite's own line repeats its children's verdict).
 */
function parseTap(stdout: string): TestResults {
  const results: TestResults = new Map();
  const open: string[] = [];
  const hasChildren: boolean[] = [];
  let sawResult = false;
  for (const line of stdout.split("\n")) {
    const subtest = TAP_SUBTEST.exec(line);
    if (subtest) {
      const level = Math.floor((subtest[1] ?? "").length / 4);
      open.length = level;
      open[level] = unescapeTap(subtest[2] ?? "");
      hasChildren[level] = false;
      if (level > 0) hasChildren[level - 1] = true;
      continue;
    }
    const result = TAP_RESULT.exec(line);
    if (!result) continue;
    sawResult = true;
    const level = Math.floor((result[1] ?? "").length / 4);
    const [description = "", directive = ""] = splitDirective(result[3] ?? "");
    const name = open[level] ?? unescapeTap(description);
    if (!hasChildren[level]) {
      const status: TestStatus = /^(skip|todo)/i.test(directive) ? "skipped" : result[2] === "ok" ? "passed" : "failed";
      record(results, [...open.slice(0, level), name].join(" > "), status);
    }
    open.length = level;
    hasChildren.length = level;
  }
  if (!sawResult) throw new Error("no TAP results in the test output (is the test command using --test-reporter=tap?)");
  return results;
}

/** "title # SKIP reason" → ["title", "SKIP reason"]; an escaped "\#" stays in the title. */
function splitDirective(text: string): [string, string] {
  const match = /^(.*?)(?<!\\)\s#\s(.*)$/.exec(text);
  return match ? [(match[1] ?? "").trim(), match[2] ?? ""] : [text.trim(), ""];
}

function unescapeTap(text: string): string {
  return text.replace(/\\#/g, "#").replace(/\\\\/g, "\\").trim();
}
