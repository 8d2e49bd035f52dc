import { chmodSync, existsSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError, loadEnv } from "../../src/config/env.js";
import { createWorkflowDeps } from "../../src/workflow/create-deps.js";
import type { Logger } from "../../src/workflow/deps.js";
import type { CommandRunner } from "../../src/workspace/command-runner.js";
import { findBubblewrap } from "../../src/workspace/command-runner.js";

const bwrap = findBubblewrap();
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
  const at = (level: LogLine["level"]) => (object: object, message = "") => lines.push({ level, object, message });
  return { lines, info: at("info"), warn: at("warn"), error: at("error") };
}

function depsFor(sandbox: string) {
  const log = recordingLogger();
  const deps = createWorkflowDeps(loadEnv({ BLUEPRINT_STATE_SECRET: "sandbox-choice-state-secret", BLUEPRINT_SANDBOX: sandbox, BLUEPRINT_WORKDIR: mkdtempSync(path.join(os.tmpdir(), "sandbox-choice-workdir-")) }), log);
  return { deps, log };
}

/** Runs a command that writes inside the workspace and outside it; says which writes landed on the host. */
async function writesThrough(runner: CommandRunner): Promise<{ inside: boolean; outside: boolean }> {
  const workspace = mkdtempSync(path.join(os.tmpdir(), "sandbox-choice-ws-"));
  const outside = mkdtempSync(path.join(os.tmpdir(), "sandbox-choice-outside-"));
  // Shell built-ins only: the fallback tests run with a PATH that holds nothing useful.
  await runner.run(`echo in > inside.txt; echo out > ${outside}/escaped.txt`, { cwd: workspace });
  return { inside: existsSync(path.join(workspace, "inside.txt")), outside: existsSync(path.join(outside, "escaped.txt")) };
}

/** A directory to use as PATH: empty, or holding a `bwrap` that cannot start (as where user namespaces are off). */
function pathWithout(kind: "missing" | "broken"): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "sandbox-choice-path-"));
  if (kind === "broken") {
    writeFileSync(path.join(dir, "bwrap"), "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n");
    chmodSync(path.join(dir, "bwrap"), 0o755);
  }
  return dir;
}

describe("where agent commands run (BLUEPRINT_SANDBOX)", () => {
  it("none: the plain runner, said in the log, even where bubblewrap works", async () => {
    const { deps, log } = depsFor("none");
    expect(deps.runner.isolation).toBe("plain");
    expect(log.lines).toEqual([{ level: "info", object: {}, message: expect.stringMatching(/plain runner \(BLUEPRINT_SANDBOX=none\)/) }]);
    expect(await writesThrough(deps.runner)).toEqual({ inside: true, outside: true });
  });

  it.each(["missing", "broken"] as const)("auto with bubblewrap %s on PATH: falls back to the plain runner and warns so in the log", async (kind) => {
    process.env.PATH = pathWithout(kind);
    const { deps, log } = depsFor("auto");
    expect(deps.runner.isolation).toBe("plain");
    expect(log.lines).toEqual([{ level: "warn", object: {}, message: expect.stringMatching(/bubblewrap is not available; agent commands fall back to the plain runner/) }]);
    expect(await writesThrough(deps.runner)).toEqual({ inside: true, outside: true });
  });

  it("bwrap without a working bubblewrap: refuses to start instead of running commands unsandboxed", () => {
    process.env.PATH = pathWithout("broken");
    const log = recordingLogger();
    const env = loadEnv({ BLUEPRINT_SANDBOX: "bwrap", BLUEPRINT_WORKDIR: mkdtempSync(path.join(os.tmpdir(), "sandbox-choice-workdir-")) });
    expect(() => createWorkflowDeps(env, log)).toThrow(ConfigError);
    expect(() => createWorkflowDeps(env, log)).toThrow(/BLUEPRINT_SANDBOX=bwrap, but bubblewrap .* cannot start here/);
  });

  // .ci/run installs bubblewrap, so CI always runs these (as test/workspace/sandbox.test.ts does).
  it.runIf(bwrap !== null).each(["auto", "bwrap"])("%s with bubblewrap working here: commands run inside it, said in the log", async (sandbox) => {
    const { deps, log } = depsFor(sandbox);
    expect(deps.runner.isolation).toBe("bwrap");
    expect(log.lines).toEqual([{ level: "info", object: { bwrap }, message: expect.stringMatching(/inside bubblewrap/) }]);
    expect(await writesThrough(deps.runner)).toEqual({ inside: true, outside: false });
  });
});
