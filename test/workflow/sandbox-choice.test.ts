import { existsSync, mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readInputs } from "../../src/action/inputs.js";
import { ConfigError, loadEnv } from "../../src/config/env.js";
import { createWorkflowDeps } from "../../src/app/create-deps.js";
import type { Logger } from "../../src/workflow/deps.js";
import { requireSandbox, SandboxUnavailable } from "../../src/app/sandbox-choice.js";
import type { CommandRunner } from "../../src/workspace/command-runner.js";
import { checkBubblewrap } from "../../src/workspace/command-runner.js";
import { pathWithout } from "../helpers/no-bubblewrap.js";

const sandboxCheck = checkBubblewrap();
const bwrap = "path" in sandboxCheck ? sandboxCheck.path : null;
const savedPath = process.env.PATH;

afterEach(() => {
  process.env.PATH = savedPath;
});

interface LogLine {
  level: "info" | "warn" | "error";
  object: object;
  message: string;
}

function recordingLogger(): Logger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at =
    (level: LogLine["level"]) =>
    (object: object, message = "") =>
      lines.push({ level, object, message });
  return { lines, info: at("info"), warn: at("warn"), error: at("error") };
}

function envFor(sandbox: string | undefined) {
  return loadEnv({
    ...(sandbox ? { BLUEPRINT_SANDBOX: sandbox } : {}),
    BLUEPRINT_STATE_SECRET: "sandbox-choice-state-secret",
    BLUEPRINT_WORKDIR: mkdtempSync(path.join(os.tmpdir(), "sandbox-choice-workdir-")),
  });
}

function depsFor(sandbox: string | undefined) {
  const log = recordingLogger();
  const deps = createWorkflowDeps(envFor(sandbox), log);
  return { deps, log };
}

/** Runs a command that writes inside the workspace and outside it; says which writes landed on the host. */
async function writesThrough(runner: CommandRunner): Promise<{ inside: boolean; outside: boolean }> {
  const workspace = mkdtempSync(path.join(os.tmpdir(), "sandbox-choice-ws-"));
  const outside = mkdtempSync(path.join(os.tmpdir(), "sandbox-choice-outside-"));
  // Shell built-ins only: the fallback tests run with a PATH that holds nothing useful.
  await runner.run(`echo in > inside.txt; echo out > ${outside}/escaped.txt`, { cwd: workspace });
  return {
    inside: existsSync(path.join(workspace, "inside.txt")),
    outside: existsSync(path.join(outside, "escaped.txt")),
  };
}

describe("where agent commands run (BLUEPRINT_SANDBOX)", () => {
  it("none: the plain runner, with a warning at start, even where bubblewrap works", async () => {
    const { deps, log } = depsFor("none");
    expect(deps.runner.isolation).toBe("plain");
    expect(log.lines).toEqual([
      {
        level: "warn",
        object: {},
        message: expect.stringMatching(/BLUEPRINT_SANDBOX=none: agent commands run WITHOUT a sandbox/),
      },
    ]);
    expect(await writesThrough(deps.runner)).toEqual({ inside: true, outside: true });
  });

  it.each(["missing", "broken"] as const)(
    "auto with bubblewrap %s on PATH: falls back to the plain runner and warns so in the log",
    async (kind) => {
      process.env.PATH = pathWithout(kind);
      const { deps, log } = depsFor("auto");
      expect(deps.runner.isolation).toBe("plain");
      expect(log.lines).toEqual([
        {
          level: "warn",
          object: {},
          message: expect.stringMatching(
            kind === "missing"
              ? /bubblewrap \(`bwrap`\) is not installed .*; agent commands fall back to the plain runner/
              : /bubblewrap cannot build the sandbox here \(.*No permissions to create new namespace\); agent commands fall back to the plain runner/,
          ),
        },
      ]);
      expect(await writesThrough(deps.runner)).toEqual({ inside: true, outside: true });
    },
  );

  it.each([
    ["bwrap", "broken"],
    ["unset (the App's default)", "missing"],
  ] as const)(
    "%s without a working bubblewrap (%s): refuses to start instead of running commands unsandboxed",
    (sandbox, kind) => {
      process.env.PATH = pathWithout(kind);
      const env = envFor(sandbox === "bwrap" ? "bwrap" : undefined);
      expect(env.BLUEPRINT_SANDBOX).toBe("bwrap");
      expect(() => createWorkflowDeps(env, recordingLogger())).toThrow(ConfigError);
      expect(() => createWorkflowDeps(env, recordingLogger())).toThrow(
        /agent commands need the bubblewrap sandbox, but .*(not installed|cannot build the sandbox).* set BLUEPRINT_SANDBOX=none/,
      );
    },
  );

  // .ci/run installs bubblewrap and fails without it, so these never skip (as test/workspace/sandbox.test.ts).
  it.each(["auto", "bwrap", undefined])(
    "%s with bubblewrap working here: commands run inside it, said in the log",
    async (sandbox) => {
      const { deps, log } = depsFor(sandbox);
      expect(deps.runner.isolation).toBe("bwrap");
      expect(log.lines).toEqual([
        { level: "info", object: { bwrap }, message: expect.stringMatching(/inside bubblewrap/) },
      ]);
      expect(await writesThrough(deps.runner)).toEqual({ inside: true, outside: false });
    },
  );

  it.each(["auto", "bwrap", undefined])(
    "a service (npm start, npm run worker) with %s: refuses without a working bubblewrap, auto included",
    (sandbox) => {
      process.env.PATH = pathWithout("broken");
      const handedOver: NodeJS.ProcessEnv = {};
      expect(() => requireSandbox(envFor(sandbox), handedOver)).toThrow(SandboxUnavailable);
      expect(() => requireSandbox(envFor(sandbox), handedOver)).toThrow(
        /agent commands need the bubblewrap sandbox, but bubblewrap cannot build the sandbox here .*apt-get install bubblewrap.*set BLUEPRINT_SANDBOX=none: they then run as this process's user/,
      );
      expect(handedOver).toEqual({});
      expect(requireSandbox(envFor("none"), handedOver).BLUEPRINT_SANDBOX).toBe("none");
    },
  );

  it("the bubblewrap a service checked is handed to what it forks: used there without probing again, and never given up for the plain runner", async () => {
    const handedOver: NodeJS.ProcessEnv = {};
    const checked = requireSandbox(envFor("auto"), handedOver);
    expect(handedOver).toEqual({ BLUEPRINT_SANDBOX_CHECKED: bwrap });
    expect(checked.BLUEPRINT_SANDBOX_CHECKED).toBe(bwrap);
    // A forked child: its PATH has no bubblewrap, so a probe there would fall back (auto); the handed-over one holds.
    process.env.PATH = pathWithout("missing");
    const log = recordingLogger();
    const child = createWorkflowDeps(
      loadEnv({
        ...handedOver,
        BLUEPRINT_SANDBOX: "auto",
        BLUEPRINT_STATE_SECRET: "sandbox-choice-state-secret",
        BLUEPRINT_WORKDIR: mkdtempSync(path.join(os.tmpdir(), "sandbox-choice-workdir-")),
      }),
      log,
    );
    expect(child.runner.isolation).toBe("bwrap");
    expect(log.lines).toEqual([
      { level: "info", object: { bwrap }, message: expect.stringMatching(/inside bubblewrap/) },
    ]);
    expect(await writesThrough(child.runner)).toEqual({ inside: true, outside: false });
  });

  it("the Action defaults to auto (a throwaway runner holding only its job's token); the job's env can still require bwrap", () => {
    expect(
      readInputs({ "INPUT_GITHUB-TOKEN": "ghs_x", "INPUT_STATE-SECRET": "sandbox-choice-state-secret" }).engine
        .BLUEPRINT_SANDBOX,
    ).toBe("auto");
    expect(
      readInputs({
        "INPUT_GITHUB-TOKEN": "ghs_x",
        "INPUT_STATE-SECRET": "sandbox-choice-state-secret",
        BLUEPRINT_SANDBOX: "bwrap",
      }).engine.BLUEPRINT_SANDBOX,
    ).toBe("bwrap");
  });
});
