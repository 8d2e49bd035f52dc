import { readFileSync } from "node:fs";
import { z } from "zod";

/** The log parsers `test_runner` can name (see parse-test-log.ts). */
export const TEST_RUNNERS = ["mocha", "jest", "vitest", "node-test", "tap"] as const;
export type TestRunner = (typeof TEST_RUNNERS)[number];

/**
 * Test ids: a list, or (as in the published SWE-bench datasets) a JSON-encoded string of a list.
 * Either way the result is a plain array of non-empty strings.
 */
const testIdList = z.preprocess(
  (value) => {
    if (typeof value !== "string") return value;
    try {
      return JSON.parse(value);
    } catch {
      return value;
    }
  },
  z.array(z.string().min(1), { error: "expected a list of test ids, or a JSON string holding one" }),
);

/**
 * One task in the SWE-bench / SWE-PolyBench format. Fields after `hints_text` are Blueprint's
 * optional extensions; public datasets lack them and they are then inferred from the repository.
 * Unknown fields (SWE-bench has `environment_setup_commit`, PolyBench `language` …) are kept.
 */
export const sweInstanceSchema = z.looseObject({
  instance_id: z.string().min(1),
  repo: z.string().regex(/^[\w.-]+\/[\w.-]+$/, 'expected "owner/name"'),
  base_commit: z.string().regex(/^[0-9a-f]{40}$/, "expected a 40-hex commit id"),
  problem_statement: z.string().min(1),
  test_patch: z.string().min(1),
  FAIL_TO_PASS: testIdList,
  PASS_TO_PASS: testIdList,
  patch: z.string().min(1).optional(),
  created_at: z.string().optional(),
  version: z.string().optional(),
  hints_text: z.string().optional(),
  /**
   * Shell run at the repository root to install dependencies (default: `npm ci`, or `npm install` without a lockfile).
   */
  install: z.string().min(1).optional(),
  /** Shell run at the repository root after test_patch is applied; its stdout is what `test_runner`'s parser reads. */
  test_cmd: z.string().min(1).optional(),
  test_runner: z.enum(TEST_RUNNERS).optional(),
  /** The test files test_patch touches. */
  test_files: z.array(z.string().min(1)).optional(),
  /** A diff adding package-lock.json, applied right after checkout, for repositories that shipped none. */
  lockfile_patch: z.string().min(1).optional(),
  license: z.string().optional(),
  issue_url: z.string().optional(),
  pr_url: z.string().optional(),
});

export type SweInstance = z.output<typeof sweInstanceSchema>;

/** Reads a JSONL file of instances; every bad line is named with its number and what is wrong. */
export function loadInstances(file: string): SweInstance[] {
  return parseInstances(readFileSync(file, "utf8"), file);
}

export function parseInstances(text: string, name = "instances"): SweInstance[] {
  const instances: SweInstance[] = [];
  const problems: string[] = [];
  const seen = new Map<string, number>();
  text.split("\n").forEach((line, index) => {
    const lineNo = index + 1;
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      problems.push(`${name}:${lineNo}: not JSON (${error instanceof Error ? error.message : String(error)})`);
      return;
    }
    const parsed = sweInstanceSchema.safeParse(value);
    if (!parsed.success) {
      const id =
        typeof value === "object" && value !== null && "instance_id" in value ? ` (${String(value.instance_id)})` : "";
      const issues = parsed.error.issues.map((issue) => `${issue.path.join(".") || "(line)"}: ${issue.message}`);
      problems.push(`${name}:${lineNo}${id}: ${issues.join("; ")}`);
      return;
    }
    const earlier = seen.get(parsed.data.instance_id);
    if (earlier !== undefined)
      problems.push(`${name}:${lineNo}: instance_id ${parsed.data.instance_id} is already used on line ${earlier}`);
    seen.set(parsed.data.instance_id, lineNo);
    instances.push(parsed.data);
  });
  if (problems.length > 0)
    throw new Error(`${problems.length} bad instance line${problems.length > 1 ? "s" : ""}:\n${problems.join("\n")}`);
  if (instances.length === 0) throw new Error(`${name}: no instances (an empty file is a mistake, not an empty suite)`);
  return instances;
}
