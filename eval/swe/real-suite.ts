import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { findRepository, type RepoSource } from "./checkout.js";
import { git } from "./git.js";
import { sweInstanceSchema, TEST_RUNNERS, type SweInstance } from "./instance.js";

export const REAL_SUITE_DIR = path.resolve(import.meta.dirname, "../suites/real");

/**
 * `suite.json`: one repository's tasks, by reference. The repository's code, the fix's diffs and
 * the issue's words are not stored here; they are read from the repository's own history and
 * issue when the suite loads (see README: what the suite ships and why).
 */
const realTaskSchema = z.object({
  instance_id: z.string().min(1),
  base_commit: z.string().regex(/^[0-9a-f]{40}$/),
  /** The merged commit that fixed the issue; its diff is split into `patch` and `test_patch`. */
  fix_commit: z.string().regex(/^[0-9a-f]{40}$/),
  issue: z.number().int().positive(),
  pr_url: z.string().optional(),
  /** Files of the fix that belong to the tests (a directory ends with "/"); everything else is the gold patch. */
  test_paths: z.array(z.string().min(1)).min(1),
  test_files: z.array(z.string().min(1)).optional(),
  test_cmd: z.string().min(1),
  test_runner: z.enum(TEST_RUNNERS),
  /** A package-lock.json next to suite.json, generated for base_commit when upstream had none. */
  lockfile: z.string().min(1).optional(),
  FAIL_TO_PASS: z.array(z.string().min(1)),
  PASS_TO_PASS: z.array(z.string().min(1)),
  created_at: z.string().optional(),
});

export const realSuiteSchema = z.object({
  repo: z.string().regex(/^[\w.-]+\/[\w.-]+$/),
  license: z.string().min(1),
  tasks: z.array(realTaskSchema).min(1),
});

export type RealSuite = z.output<typeof realSuiteSchema>;
export type RealTask = z.output<typeof realTaskSchema>;
export type RealInstance = SweInstance & { source: RepoSource };

/** Files the gold patch leaves out: release notes and the licence say nothing about the fix. */
const NOT_GOLD = [/^history\.md$/i, /^changelog(\.md)?$/i, /^license(\.md)?$/i];

export interface RealSuiteOptions {
  root?: string;
  /** Where the repositories are (`DIR/owner__name` …); default: a cache filled by cloning from GitHub. */
  reposDir?: string;
  /** Holds cloned repositories and issue texts (default: $XDG_CACHE_HOME or ~/.cache, /blueprint-eval). */
  cacheDir?: string;
  /** false: do not read issue texts (validation does not need them); problem_statement then names the issue. */
  problemStatements?: boolean;
  /** Loads issue texts (default: GitHub's REST API, with $GITHUB_TOKEN when set). */
  fetchIssue?: (repo: string, issue: number) => Promise<{ title: string; body: string }>;
  only?: string[];
}

export function defaultCacheDir(): string {
  return path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "blueprint-eval");
}

export function readRealSuites(root = REAL_SUITE_DIR): Array<RealSuite & { dir: string }> {
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join(root, entry.name, "suite.json")))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const dir = path.join(root, name);
      const parsed = realSuiteSchema.safeParse(JSON.parse(readFileSync(path.join(dir, "suite.json"), "utf8")));
      if (!parsed.success)
        throw new Error(
          `${dir}/suite.json: ${parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ")}`,
        );
      return { ...parsed.data, dir };
    });
}

/** Every task of eval/suites/real as an SWE-bench instance, with where its repository is. */
export async function loadRealSuite(options: RealSuiteOptions = {}): Promise<RealInstance[]> {
  const cacheDir = options.cacheDir ?? defaultCacheDir();
  const instances: RealInstance[] = [];
  for (const suite of readRealSuites(options.root)) {
    const tasks = suite.tasks.filter((task) => !options.only || options.only.includes(task.instance_id));
    if (tasks.length === 0) continue;
    const gitDir = options.reposDir
      ? findRepository(options.reposDir, suite.repo)
      : await cachedClone(suite.repo, cacheDir, tasks);
    const source: RepoSource = options.reposDir
      ? { reposDir: options.reposDir }
      : { reposDir: path.join(cacheDir, "repos") };
    for (const task of tasks) instances.push({ ...(await instanceOf(suite, task, gitDir, cacheDir, options)), source });
  }
  const unknown = (options.only ?? []).filter((id) => !instances.some((inst) => inst.instance_id === id));
  if (unknown.length > 0) throw new Error(`unknown real task${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}`);
  return instances;
}

async function instanceOf(
  suite: RealSuite & { dir: string },
  task: RealTask,
  gitDir: string,
  cacheDir: string,
  options: RealSuiteOptions,
): Promise<SweInstance> {
  const changed = (await git(["diff", "--name-only", task.base_commit, task.fix_commit], { cwd: gitDir })).stdout
    .split("\n")
    .filter(Boolean);
  const isTest = (file: string) =>
    task.test_paths.some((entry) => (entry.endsWith("/") ? file.startsWith(entry) : file === entry));
  const testFiles = changed.filter(isTest);
  const goldFiles = changed.filter((file) => !isTest(file) && !NOT_GOLD.some((pattern) => pattern.test(file)));
  const diff = async (files: string[]) =>
    files.length === 0
      ? ""
      : (await git(["diff", "--binary", task.base_commit, task.fix_commit, "--", ...files], { cwd: gitDir })).stdout;
  const issueUrl = `https://github.com/${suite.repo}/issues/${task.issue}`;
  const problem =
    options.problemStatements === false
      ? `(issue text not loaded: ${issueUrl})`
      : await problemStatement(suite.repo, task.issue, cacheDir, options.fetchIssue ?? fetchGitHubIssue);
  return sweInstanceSchema.parse({
    instance_id: task.instance_id,
    repo: suite.repo,
    base_commit: task.base_commit,
    problem_statement: problem,
    patch: await diff(goldFiles),
    test_patch: await diff(testFiles),
    FAIL_TO_PASS: task.FAIL_TO_PASS,
    PASS_TO_PASS: task.PASS_TO_PASS,
    test_cmd: task.test_cmd,
    test_runner: task.test_runner,
    test_files: task.test_files ?? testFiles,
    ...(task.lockfile
      ? { lockfile_patch: newFilePatch("package-lock.json", readFileSync(path.join(suite.dir, task.lockfile), "utf8")) }
      : {}),
    ...(task.created_at ? { created_at: task.created_at } : {}),
    license: suite.license,
    issue_url: issueUrl,
    ...(task.pr_url ? { pr_url: task.pr_url } : {}),
  });
}

/** A bare clone of github.com/owner/name under the cache, fetched again when a commit is missing. */
async function cachedClone(repo: string, cacheDir: string, tasks: RealTask[]): Promise<string> {
  const reposDir = path.join(cacheDir, "repos");
  const target = path.join(reposDir, `${repo.replace("/", "__")}.git`);
  const url = `https://github.com/${repo}.git`;
  mkdirSync(reposDir, { recursive: true });
  if (!existsSync(target)) await git(["clone", "--bare", "--quiet", url, target], { cwd: reposDir });
  for (const commit of tasks.flatMap((task) => [task.base_commit, task.fix_commit])) {
    const present = await git(["cat-file", "-e", `${commit}^{commit}`], { cwd: target, allowFailure: true });
    if (present.code !== 0) await git(["fetch", "--quiet", url, "+refs/heads/*:refs/heads/*"], { cwd: target });
  }
  return target;
}

/** A diff that adds `file` with `content` (used to ship a generated lockfile as `lockfile_patch`). */
export function newFilePatch(file: string, content: string): string {
  const lines = content.endsWith("\n") ? content.slice(0, -1).split("\n") : content.split("\n");
  const noEol = content.endsWith("\n") ? "" : "\n\\ No newline at end of file";
  return `diff --git a/${file} b/${file}\nnew file mode 100644\n--- /dev/null\n+++ b/${file}\n@@ -0,0 +1,${lines.length} @@\n${lines.map((line) => `+${line}`).join("\n")}${noEol}\n`;
}

async function problemStatement(
  repo: string,
  issue: number,
  cacheDir: string,
  fetchIssue: NonNullable<RealSuiteOptions["fetchIssue"]>,
): Promise<string> {
  const file = path.join(cacheDir, "issues", `${repo.replace("/", "__")}-${issue}.md`);
  if (existsSync(file)) return readFileSync(file, "utf8");
  let fetched: { title: string; body: string };
  try {
    fetched = await fetchIssue(repo, issue);
  } catch (error) {
    throw new Error(
      `could not load the text of ${repo}#${issue} (${error instanceof Error ? error.message : String(error)}); the task needs it as its problem statement`,
    );
  }
  const text = trimLinks(`${fetched.title}\n\n${fetched.body}`.trim());
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${text}\n`);
  return `${text}\n`;
}

async function fetchGitHubIssue(repo: string, issue: number): Promise<{ title: string; body: string }> {
  const headers: Record<string, string> = { accept: "application/vnd.github+json", "user-agent": "blueprint-eval" };
  if (process.env.GITHUB_TOKEN) headers.authorization = `Bearer ${process.env.GITHUB_TOKEN}`;
  const response = await fetch(`https://api.github.com/repos/${repo}/issues/${issue}`, {
    headers,
    signal: AbortSignal.timeout(20_000),
  });
  if (!response.ok) throw new Error(`GitHub answered ${response.status} ${response.statusText}`);
  return issueFromGitHub(await response.json(), issue);
}

/**
 * GitHub's issue JSON → its words. The issues API answers for pull requests too; a problem statement must be a reported
 * issue.
 */
export function issueFromGitHub(json: unknown, issue: number): { title: string; body: string } {
  const parsed = z
    .object({ title: z.string(), body: z.string().nullable(), pull_request: z.unknown().optional() })
    .parse(json);
  if (parsed.pull_request !== undefined) throw new Error(`#${issue} is a pull request, not an issue`);
  return { title: parsed.title, body: parsed.body ?? "" };
}

/**
 * The issue's words with links taken out (the issue asks for nothing more): a markdown link keeps
 * its text, an image or a bare address goes.
 */
export function trimLinks(text: string): string {
  return text
    .replace(/!\[[^\]]*\]\([^)]*\)/g, "")
    .replace(/\[([^\]]*)\]\((?:[^()]|\([^)]*\))*\)/g, "$1")
    .replace(/<https?:\/\/[^>\s]+>/g, "")
    .replace(/https?:\/\/[^\s)>\]]+/g, "")
    .replace(/\r\n/g, "\n");
}
