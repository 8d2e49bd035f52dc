import { execFileSync } from "node:child_process";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { MAX_PATH_LENGTH } from "../../src/plan/validate.js";
import { ALL_TOOLS, dispatchToolCall } from "../../src/tools/registry.js";
import type { AgentMode, ToolContext, ToolResult } from "../../src/tools/tool.js";
import type { CommandRunner, RunOptions } from "../../src/workspace/command-runner.js";

/** The model-facing tools' argument names (a fixed contract), per tool. */
const ARGUMENT_NAMES: Record<string, string[]> = {
  read_file: ["path", "start_line", "end_line"],
  list_files: ["path", "pattern"],
  search: ["pattern", "path", "glob"],
  write_file: ["path", "content"],
  edit_file: ["path", "old_string", "new_string", "replace_all"],
  delete_file: ["path"],
  run_command: ["command", "timeout_s"],
  ask_user: ["question"],
  submit_plan: ["title", "summary", "steps", "risks", "verification", "questions"],
  complete_step: ["step_id", "summary", "outcome"],
};
/** Random tool names may be "constructor" or "toString": look up own keys only. */
const argumentNamesOf = (name: string) =>
  Object.hasOwn(ARGUMENT_NAMES, name) ? (ARGUMENT_NAMES[name] ?? []) : ["path", "question"];
const REQUIRED: Record<string, string[]> = {
  read_file: ["path"],
  search: ["pattern"],
  write_file: ["path", "content"],
  edit_file: ["path", "old_string", "new_string"],
  delete_file: ["path"],
  run_command: ["command"],
  ask_user: ["question"],
  submit_plan: ["title", "summary", "steps"],
  complete_step: ["step_id", "summary"],
};
const WRITE_TOOLS = ["write_file", "edit_file", "delete_file", "run_command"];
/** Every registered tool, one the spec names but that may be missing, and names no tool has. */
const TOOL_NAMES = [...new Set([...ALL_TOOLS.map((tool) => tool.name), ...Object.keys(ARGUMENT_NAMES), "repo_map"])];
const toolName = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...TOOL_NAMES) },
  { weight: 1, arbitrary: fc.string({ maxLength: 15 }) },
);

// ---- a workspace that tells on any escape -------------------------------------------------------

/** A command runner that never runs anything: generated commands must never reach a shell. */
function stubRunner(): CommandRunner & { calls: string[] } {
  const calls: string[] = [];
  return {
    isolation: "plain",
    calls,
    async run(command: string, _options: RunOptions) {
      calls.push(command);
      return { exitCode: 0, signal: null, timedOut: false, output: "stub output\n", durationMs: 1 };
    },
  };
}

interface Workspace {
  base: string;
  root: string;
  outside: string;
  context: ToolContext;
  runner: ReturnType<typeof stubRunner>;
  git(...args: string[]): string;
}

/** base/repo is the git workspace; base/outside holds a sentinel; repo/escape is a symlink to it. */
async function createWorkspace(mode: AgentMode): Promise<Workspace> {
  const base = await fs.mkdtemp(path.join(os.tmpdir(), `bp-prop-${mode}-`));
  const root = path.join(base, "repo");
  const outside = path.join(base, "outside");
  await fs.mkdir(path.join(root, "src"), { recursive: true });
  await fs.mkdir(path.join(root, "docs"), { recursive: true });
  await fs.mkdir(outside);
  await fs.writeFile(path.join(outside, "sentinel.txt"), "untouched\n");
  await fs.writeFile(path.join(root, "README.md"), "# Demo\nretry support\n");
  await fs.writeFile(path.join(root, "src", "a.ts"), "export const retry = () => 42;\nretry();\n");
  await fs.writeFile(path.join(root, "docs", "guide.md"), "Call retry() twice.\n");
  await fs.symlink("../outside", path.join(root, "escape"));
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=Test", "-c", "user.email=test@example.com", ...args], {
      cwd: root,
      encoding: "utf8",
    });
  git("init", "-q");
  git("add", "-A");
  git("commit", "-q", "-m", "init");
  const runner = stubRunner();
  const context: ToolContext = {
    root,
    mode,
    runner,
    filesRead: new Set(),
    audit: [],
    allowWorkflowWrites: false,
    stepId: "S1",
  };
  return { base, root, outside, context, runner, git };
}

/** Nothing outside the workspace changed, and .git/ was left alone. */
async function expectNoEscape(workspace: Workspace, gitBefore: { head: string; config: string }): Promise<void> {
  expect((await fs.readdir(workspace.base)).sort()).toEqual(["outside", "repo"]);
  expect(await fs.readdir(workspace.outside)).toEqual(["sentinel.txt"]);
  expect(await fs.readFile(path.join(workspace.outside, "sentinel.txt"), "utf8")).toBe("untouched\n");
  expect(workspace.git("rev-parse", "HEAD")).toBe(gitBefore.head);
  expect(await fs.readFile(path.join(workspace.root, ".git", "config"), "utf8")).toBe(gitBefore.config);
}

const gitState = async (workspace: Workspace) => ({
  head: workspace.git("rev-parse", "HEAD"),
  config: await fs.readFile(path.join(workspace.root, ".git", "config"), "utf8"),
});

// ---- generators -------------------------------------------------------------------------------

const pathLike = fc.constantFrom(
  "README.md",
  "src",
  "src/a.ts",
  "docs/",
  "new/file.txt",
  "notes.md",
  "../outside/sentinel.txt",
  "..",
  "/etc/passwd",
  ".git/config",
  ".git",
  "escape",
  "escape/sentinel.txt",
  "escape/new.txt",
  "missing.md",
  "",
  " ",
  ".",
  "./README.md",
  "src/../README.md",
  "a\0b",
  "~/x",
  "C:\\x",
  ".github/workflows/ci.yml",
  "src\\..\\..\\outside\\x",
);
const patternLike = fc.constantFrom(
  "retry",
  "(",
  "[a-z]+",
  "\\",
  "x*",
  "(?<=a)b",
  "^",
  "**/*.ts",
  "*.md",
  "[",
  ":(attr:x)",
  ":!*",
  "(a+)+$",
  "",
);
const anyValue = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: "binary", maxLength: 10 }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 2 }),
);
const stepLike = fc.record(
  {
    id: fc.constantFrom("S1", "S2", "x", ""),
    title: fc.string({ maxLength: 10 }),
    details: fc.string({ maxLength: 10 }),
    files: fc.array(pathLike, { maxLength: 2 }),
    deps: fc.array(fc.constantFrom("S1", "S2", "S9"), { maxLength: 2 }),
    risk: fc.constantFrom(null, "r"),
    complexity: fc.constantFrom(null, "low", "huge"),
  },
  { requiredKeys: [] },
);
const fittingValue: Record<string, fc.Arbitrary<unknown>> = {
  path: pathLike,
  pattern: patternLike,
  glob: patternLike,
  start_line: fc.oneof(fc.integer({ min: -2, max: 30 }), fc.constant(null)),
  end_line: fc.oneof(fc.integer({ min: -2, max: 30 }), fc.constant(null)),
  timeout_s: fc.oneof(fc.integer({ min: -1, max: 700 }), fc.constant(null)),
  replace_all: fc.oneof(fc.boolean(), fc.constant(null)),
  old_string: fc.constantFrom("retry", "42", "# Demo", "", "missing"),
  steps: fc.array(stepLike, { maxLength: 3 }),
  step_id: fc.constantFrom("S1", "S2", ""),
};
const valueFor = (key: string) =>
  fc.oneof(
    { weight: 1, arbitrary: anyValue },
    { weight: 3, arbitrary: fittingValue[key] ?? fc.string({ maxLength: 30 }) },
  );

/** A JSON object with some of the tool's argument names (values of any type) and now and then a stray key. */
const argumentObject = (name: string) => {
  const keys = argumentNamesOf(name);
  return fc
    .tuple(
      fc.record(Object.fromEntries(keys.map((key) => [key, valueFor(key)])), { requiredKeys: [] }),
      fc.option(fc.tuple(fc.string({ maxLength: 6 }), anyValue)),
    )
    .map(([args, stray]) => (stray ? { ...args, [stray[0]]: stray[1] } : args));
};

const rawArguments = (name: string) =>
  fc.oneof(
    { weight: 4, arbitrary: argumentObject(name).map((args) => JSON.stringify(args)) },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify(value) ?? "null") },
    {
      weight: 1,
      arbitrary: fc.tuple(argumentObject(name), fc.nat()).map(([args, cut]) => JSON.stringify(args).slice(0, cut % 40)),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "",
        " ",
        "\n",
        "null",
        "[]",
        "{}",
        "{",
        '"x"',
        "1e999",
        '{"path":null}',
        '{"__proto__":{"path":"README.md"}}',
        "{'path': 'README.md'}",
        '{"path": "README.md"',
      ),
    },
  );

const call = toolName.chain((name) => rawArguments(name).map((raw) => ({ name, raw })));

// ---- the oracle -----------------------------------------------------------------------------------

type Expected = "plan mode" | "no such tool" | "bad JSON" | "invalid" | "valid";

/** What the dispatcher must answer, from the tool's mode and its own zod schema. */
function expectedOutcome(name: string, raw: string, mode: AgentMode): Expected {
  if (mode === "plan" && WRITE_TOOLS.includes(name)) return "plan mode";
  const tool = ALL_TOOLS.find((candidate) => candidate.name === name && candidate.modes.includes(mode));
  if (!tool) return "no such tool";
  let args: unknown;
  try {
    args = raw.trim() === "" ? {} : JSON.parse(raw);
  } catch {
    return "bad JSON";
  }
  return tool.schema.safeParse(args).success ? "valid" : "invalid";
}

function expectAnswer(result: ToolResult, expected: Expected, mode: AgentMode): void {
  expect(typeof result.content).toBe("string");
  if (result.content.startsWith("Error:"))
    expect(result.content.slice("Error:".length).trim().length).toBeGreaterThan(10);
  if (expected !== "valid") {
    expect(result.content.startsWith("Error:"), `${expected}: ${result.content.slice(0, 200)}`).toBe(true);
    expect(result.ending).toBeUndefined();
  }
  if (expected === "plan mode") expect(result.content).toMatch(/plan mode/);
  if (result.ending?.kind === "plan_submitted") expect(mode).toBe("plan");
  if (result.ending?.kind === "step_completed" || result.ending?.kind === "step_blocked") expect(mode).toBe("build");
}

function hugeArguments(name: string): fc.Arbitrary<string> {
  const keys = argumentNamesOf(name);
  const huge = fc
    .tuple(
      fc.constantFrom("a", "é", "\n", "😀", "\\", "\0", "./", "a/../", "retry"),
      fc.integer({ min: 1_000_000, max: 1_050_000 }),
    )
    .map(([chunk, size]) => chunk.repeat(Math.ceil(size / chunk.length)));
  return fc.oneof(
    fc
      .tuple(fc.constantFrom(...keys), huge)
      .map(([key, value]) => JSON.stringify({ ...(key === "path" ? {} : { path: "README.md" }), [key]: value })),
    huge,
  );
}

// ---- properties -------------------------------------------------------------------------------

describe("dispatchToolCall in plan mode", () => {
  let workspace: Workspace;
  let before: { head: string; config: string };
  beforeAll(async () => {
    workspace = await createWorkspace("plan");
    before = await gitState(workspace);
  });
  afterAll(async () => {
    await fs.rm(workspace.base, { recursive: true, force: true });
  });

  it("answers every call with a string and every bad call with an Error:", async () => {
    await fc.assert(
      fc.asyncProperty(call, async ({ name, raw }) => {
        const result = await dispatchToolCall(name, raw, workspace.context);
        expectAnswer(result, expectedOutcome(name, raw, "plan"), "plan");
      }),
      { numRuns: 2000 },
    );
    expect(workspace.git("status", "--porcelain")).toBe("");
  });

  it("refuses every write and command tool, naming plan mode, whatever the arguments", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...WRITE_TOOLS).chain((name) => rawArguments(name).map((raw) => ({ name, raw }))),
        async ({ name, raw }) => {
          const result = await dispatchToolCall(name, raw, workspace.context);
          expect(result.content).toMatch(/^Error:.*plan mode/s);
          expect(result.ending).toBeUndefined();
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("survives arguments of about 1 MB", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...TOOL_NAMES).chain((name) => hugeArguments(name).map((raw) => ({ name, raw }))),
        async ({ name, raw }) => {
          const result = await dispatchToolCall(name, raw, workspace.context);
          expectAnswer(result, expectedOutcome(name, raw, "plan"), "plan");
        },
      ),
      { numRuns: 30 },
    );
  });

  // Normalising a long "../" chain is quadratic (1 MB took minutes), so the length is checked first.
  it("refuses a path over the length cap for its length, up to 1 MB of ../", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("read_file", "list_files", "search"),
        fc.integer({ min: Math.ceil(MAX_PATH_LENGTH / 3), max: 350_000 }),
        async (name, count) => {
          const raw = JSON.stringify({ path: "../".repeat(count), pattern: "retry" });
          const result = await dispatchToolCall(name, raw, workspace.context);
          expect(result.content).toMatch(
            new RegExp(
              `^Error:.*is too long \\(${count * 3} characters; at most ${MAX_PATH_LENGTH} are allowed\\)`,
              "s",
            ),
          );
          expect(result.content.length, "the path is not echoed whole").toBeLessThan(400);
        },
      ),
      { numRuns: 20 },
    );
  });

  it("still judges a ../ chain just under the cap on where it leads", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("read_file", "list_files", "search"),
        fc.integer({ min: 1, max: Math.floor(MAX_PATH_LENGTH / 3) }),
        async (name, count) => {
          const raw = JSON.stringify({ path: "../".repeat(count), pattern: "retry" });
          const result = await dispatchToolCall(name, raw, workspace.context);
          expect(result.content).toMatch(/^Error:.*leaves the repository/s);
        },
      ),
      { numRuns: 50 },
    );
  });

  it("refuses Windows-style absolute paths, saying to send a relative path", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("read_file", "list_files", "search"),
        fc.constantFrom("\\etc\\passwd", "\\\\server\\share", "C:\\x", "c:/x", "C:x"),
        async (name, file) => {
          const result = await dispatchToolCall(
            name,
            JSON.stringify({ path: file, pattern: "retry" }),
            workspace.context,
          );
          expect(result.content).toMatch(/^Error:.*is absolute.*relative to the repository root/s);
        },
      ),
      { numRuns: 30 },
    );
  });

  it("leaves the working tree clean, runs no command and touches nothing outside", async () => {
    expect(workspace.git("status", "--porcelain")).toBe("");
    expect(workspace.runner.calls).toEqual([]);
    expect(workspace.context.audit).toEqual([]);
    await expectNoEscape(workspace, before);
  });
});

describe("dispatchToolCall in build mode (fresh temp repo, stub command runner)", () => {
  let workspace: Workspace;
  let before: { head: string; config: string };
  let validCommands = 0;
  beforeAll(async () => {
    workspace = await createWorkspace("build");
    before = await gitState(workspace);
  });
  afterAll(async () => {
    await fs.rm(workspace.base, { recursive: true, force: true });
  });

  it("answers every call with a string and every bad call with an Error:", async () => {
    await fc.assert(
      fc.asyncProperty(call, async ({ name, raw }) => {
        const expected = expectedOutcome(name, raw, "build");
        if (name === "run_command" && expected === "valid") validCommands++;
        const result = await dispatchToolCall(name, raw, workspace.context);
        expectAnswer(result, expected, "build");
      }),
      { numRuns: 2000 },
    );
  });

  it("survives arguments of about 1 MB", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...TOOL_NAMES).chain((name) => hugeArguments(name).map((raw) => ({ name, raw }))),
        async ({ name, raw }) => {
          const expected = expectedOutcome(name, raw, "build");
          if (name === "run_command" && expected === "valid") validCommands++;
          const result = await dispatchToolCall(name, raw, workspace.context);
          expectAnswer(result, expected, "build");
        },
      ),
      { numRuns: 30 },
    );
  });

  it("names the argument that has the wrong type or is missing", async () => {
    const wrong = fc.oneof(
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.constant([]),
      fc.constant({}),
      fc.constant(undefined),
    );
    const minimal: Record<string, Record<string, unknown>> = {
      read_file: { path: "README.md" },
      search: { pattern: "retry" },
      write_file: { path: "notes.md", content: "x" },
      edit_file: { path: "README.md", old_string: "Demo", new_string: "Demo!" },
      delete_file: { path: "notes.md" },
      run_command: { command: "true" },
      ask_user: { question: "Which one?" },
      submit_plan: { title: "T", summary: "S", steps: [{ id: "S1", title: "Do it" }] },
      complete_step: { step_id: "S1", summary: "done" },
    };
    const broken = fc
      .constantFrom(...Object.keys(REQUIRED))
      .chain((name) => fc.tuple(fc.constant(name), fc.constantFrom(...(REQUIRED[name] ?? [])), wrong));
    await fc.assert(
      fc.asyncProperty(broken, async ([name, key, value]) => {
        fc.pre(!(key === "steps" && Array.isArray(value))); // [] has the right type; it fails for another reason
        const mode = ALL_TOOLS.find((tool) => tool.name === name)?.modes.includes("build") ? "build" : "plan";
        const result = await dispatchToolCall(name, JSON.stringify({ ...minimal[name], [key]: value }), {
          ...workspace.context,
          mode,
        });
        expect(result.content).toMatch(/^Error:/);
        expect(result.content).toContain(key);
      }),
      { numRuns: 500 },
    );
  });

  it("ran only the stub runner, wrote only inside the workspace and left .git/ alone", async () => {
    expect(workspace.runner.calls.length).toBe(validCommands);
    for (const entry of workspace.context.audit.filter((entry) => entry.action !== "command")) {
      expect(
        entry.target.startsWith("/") || entry.target.startsWith("..") || entry.target.startsWith(".git/"),
        entry.target,
      ).toBe(false);
    }
    await expectNoEscape(workspace, before);
  });
});
