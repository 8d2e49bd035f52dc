import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { countDirections, crossImports, partOf, specifiersOf } from "../../scripts/import-directions.mjs";

// Issue #29 point 4 and docs/ARCHITECTURE.md: who may import whom, read from the imports themselves
// (`node scripts/import-directions.mjs` prints every direction and its count).
const root = fileURLToPath(new URL("../..", import.meta.url));

/**
 * What each part of src/ may import. A part is a folder of src/ ("entries" = the process entry files
 * in src/ itself); "pkg:github" is probot and @octokit/*, "pkg:redis" is ioredis and bullmq (and bottleneck, should it
 * come back). Keep this
 * table and the diagram in docs/ARCHITECTURE.md the same.
 */
const ALLOWED: Record<string, readonly string[]> = {
  shared: [],
  plan: ["shared"],
  workspace: ["shared"],
  tools: ["plan", "workspace", "shared"],
  agent: ["tools", "plan", "workspace", "shared"],
  config: ["plan", "workspace", "shared"],
  // Use cases. They print and read GitHub's formats (the plan comment, the hidden state marker,
  // CODEOWNERS, permission words) from github/, which in turn implements their ports (ports.ts, deps.ts).
  workflow: ["agent", "tools", "plan", "workspace", "config", "github", "shared"],
  github: ["workflow", "plan", "config", "shared", "pkg:github"],
  // A job's GitHub credentials (#29 point 2): minted with the GitHub adapter's App calls, sealed and
  // renewed for Redis; the job runtime and the intake's entry use them, nothing below does.
  credentials: ["github", "config", "plan", "shared", "pkg:github", "pkg:redis"],
  jobs: ["credentials", "config", "shared", "pkg:redis"],
  setup: ["config", "shared", "pkg:github"],
  // The Action and the CLI wire the engine with app/create-deps.ts, as the App's processes do.
  action: ["app", "jobs", "workflow", "github", "config", "shared", "pkg:github"],
  cli: ["app", "jobs", "workflow", "github", "config", "shared"],
  // Start-up: the engine wired from the environment (model, sandbox, workspaces, tables loaded at start) and what
  // each process runs, composed: the job runtime wired to the use cases and the GitHub adapter.
  app: ["jobs", "credentials", "workflow", "agent", "tools", "workspace", "github", "config", "shared", "pkg:github"],
  entries: ["app", "action", "cli", "setup", "config", "shared"],
};

/**
 * Directions the code has today that the table does not allow, each with how many imports take it.
 * A count may shrink but never grow, and a direction that is gone comes off the list. Most wait for the
 * restructure of the processes and credentials (#29 points 1 and 2), which empties this list.
 */
const EXCEPTIONS: Record<string, number> = {
  // The job runtime runs the use cases and the GitHub adapter itself; the restructure hands it one getter instead.
  "jobs -> workflow": 14,
  "jobs -> github": 9,
  // The GitHub adapter reaches into the job runtime (the Job type, turns).
  "github -> jobs": 3,
  // The job's shape and each kind's permissions (jobs/job.ts), which a token is minted and sealed for.
  "credentials -> jobs": 1,
  // The use cases know the job's shape (Job, the permission cache).
  "workflow -> jobs": 3,
  // index.ts takes Probot's types for its default export; start.ts runs Probot.
  "entries -> pkg:github": 2,
  // The CLI and the Action build a job inline: a checkout, a repository map, secret masking.
  "cli -> workspace": 1,
  "cli -> tools": 1,
  "action -> agent": 1,
  // GitHub's permission words (PERMISSION_LEVELS), which belong below both when github/ is split into its formats and
  // its adapter.
  "config -> github": 2,
};

const ENGINE = ["agent", "tools", "plan", "workspace"];
const imports = crossImports(root);
const counts = countDirections(imports);

describe("import directions in src/", () => {
  it("reads import and export-from declarations, type-only ones and import() too", () => {
    const text = [
      'import { a } from "./a.js";',
      'import type { B } from "../b/b.js";',
      'import "./side-effect.js";',
      'export { c } from "./c.js";',
      'export type { D } from "@octokit/rest";',
      'const e = await import("./e.js");',
      'type F = import("./f.js").F;',
      "const g = 'not an import';",
    ].join("\n");
    expect(specifiersOf("sample.ts", text)).toEqual([
      "./a.js",
      "../b/b.js",
      "./side-effect.js",
      "./c.js",
      "@octokit/rest",
      "./e.js",
      "./f.js",
    ]);
    expect([
      partOf("src/agent/loop.ts"),
      partOf("src/tools/repo-map/rank.ts"),
      partOf("src/index.ts"),
      partOf("test/x.test.ts"),
    ]).toEqual(["agent", "tools", "entries", undefined]);
  });

  it("finds the imports it checks, relative paths resolved to their folders", () => {
    expect(imports).toContainEqual({
      from: "workflow",
      to: "plan",
      file: "src/workflow/approval/outside-plan.ts",
      target: "src/plan/render.ts",
    });
    expect(imports).toContainEqual({
      from: "github",
      to: "pkg:github",
      file: "src/github/installation-octokit.ts",
      target: "probot",
    });
  });

  it("knows every part of src/: a new folder gets its row in the table (and the map)", () => {
    const parts = new Set(imports.flatMap(({ from, to }) => [from, to]).filter((part) => !part.startsWith("pkg:")));
    expect([...parts].filter((part) => !(part in ALLOWED))).toEqual([]);
  });

  it("keeps the engine (agent, tools, plan, workspace) free of GitHub, job and process code, with no exception", () => {
    const engineOut = imports.filter(
      ({ from, to }) => ENGINE.includes(from) && !ENGINE.includes(to) && to !== "shared",
    );
    expect(engineOut.map(({ file, target }) => `${file} -> ${target}`)).toEqual([]);
  });

  it("has no direction that the table does not allow but the listed exceptions, and none of those grows", () => {
    const unexpected = Object.entries(counts)
      .filter(([direction, count]) => {
        const [from = "", to = ""] = direction.split(" -> ");
        return !ALLOWED[from]?.includes(to) && count > (EXCEPTIONS[direction] ?? 0);
      })
      .map(([direction, count]) => {
        const files = imports
          .filter(({ from, to }) => `${from} -> ${to}` === direction)
          .map(({ file, target }) => `${file} -> ${target}`);
        return `${direction}: ${count} (allowed ${EXCEPTIONS[direction] ?? 0}): ${files.join(", ")}`;
      });
    expect(unexpected).toEqual([]);
  });

  it("reaches a job's credentials only through their doors: index (every process), intake (minting), redis (renewal through Redis)", () => {
    const doors = ["src/credentials/index.ts", "src/credentials/intake.ts", "src/credentials/redis.ts"];
    const past = imports.filter(
      ({ from, to, target }) => from !== "credentials" && to === "credentials" && !doors.includes(target),
    );
    expect(past.map(({ file, target }) => `${file} -> ${target}`)).toEqual([]);
    expect(imports.filter(({ to }) => to === "credentials").length).toBeGreaterThan(0);
  });

  it("keeps the exception list honest: each is still taken and not allowed (else it comes off the list)", () => {
    const stale = Object.keys(EXCEPTIONS).filter((direction) => {
      const [from = "", to = ""] = direction.split(" -> ");
      return (counts[direction] ?? 0) === 0 || ALLOWED[from]?.includes(to);
    });
    expect(stale).toEqual([]);
  });
});
