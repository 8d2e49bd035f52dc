import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, readFileSync, promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createCommandRunner, scrubbedEnv, CappedOutput, truncateMiddle } from "../../src/workspace/command-runner.js";
import { PATIENCE_MS } from "../helpers/patience.js";

let cwd: string;

beforeAll(async () => {
  cwd = await fs.mkdtemp(path.join(os.tmpdir(), "bp-runner-"));
});

afterAll(async () => {
  await fs.rm(cwd, { recursive: true, force: true });
});

/** A process counts as gone when it no longer exists or is a zombie waiting for a reaper. */
function isAlive(pid: number): boolean {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return false;
  try {
    const state = readFileSync(stat, "utf8").replace(/^.*\)\s+/, "")[0];
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

async function waitUntilGone(pid: number, ms = PATIENCE_MS): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!isAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return !isAlive(pid);
}

function firstPid(output: string): number {
  const match = /PID=(\d+)/.exec(output);
  if (!match) throw new Error(`no PID in output: ${output}`);
  return Number(match[1]);
}

describe("createCommandRunner", () => {
  const runner = createCommandRunner();

  it("reports exit code 0 and the output of a successful command", async () => {
    const result = await runner.run("echo hello; echo oops >&2", { cwd });
    expect(result).toMatchObject({ exitCode: 0, signal: null, timedOut: false });
    expect(result.output).toContain("hello\n");
    expect(result.output).toContain("oops\n");
  });

  it("reports a non-zero exit code", async () => {
    const result = await runner.run("exit 3", { cwd });
    expect(result.exitCode).toBe(3);
    expect(result.timedOut).toBe(false);
    expect((await runner.run("false", { cwd })).exitCode).toBe(1);
    expect((await runner.run("no-such-command-xyz", { cwd })).exitCode).toBe(127);
  });

  it("runs in the given directory", async () => {
    const result = await runner.run("pwd", { cwd });
    expect(result.output.trim()).toBe(await fs.realpath(cwd));
  });

  it("kills a command that runs past its timeout, with the background children it started", async () => {
    const result = await runner.run("sleep 3600 & echo PID=$!; sleep 3600", { cwd, timeoutMs: 1000 });
    expect(result.timedOut).toBe(true);
    expect(result.exitCode).toBeNull();
    expect(result.signal).toBe("SIGKILL");
    expect(await waitUntilGone(firstPid(result.output))).toBe(true);
  });

  it("kills a background child left behind by a command that exited", async () => {
    const result = await runner.run("sleep 3600 >/dev/null 2>&1 & echo PID=$!", { cwd, timeoutMs: PATIENCE_MS });
    expect(result.exitCode).toBe(0);
    expect(result.timedOut).toBe(false);
    expect(await waitUntilGone(firstPid(result.output))).toBe(true);
  });

  it("returns when the command exits even if a background child still holds its output", async () => {
    // `npm run dev &` style: the child inherits stdout. The command is done when the shell exits;
    // waiting for the child's pipe to close would turn every such command into a timeout.
    const result = await runner.run("sleep 3600 & echo PID=$!", { cwd, timeoutMs: PATIENCE_MS });
    expect(result.timedOut).toBe(false);
    expect(result.exitCode).toBe(0);
    expect(await waitUntilGone(firstPid(result.output))).toBe(true);
  });

  it("caps long output, keeping its head and tail", async () => {
    const capped = createCommandRunner({ outputCapBytes: 200 });
    const result = await capped.run("echo HEAD-MARK; for i in $(seq 1 2000); do echo filler-$i; done; echo TAIL-MARK", {
      cwd,
    });
    expect(result.exitCode).toBe(0);
    expect(result.output.startsWith("HEAD-MARK\n")).toBe(true);
    expect(result.output.trimEnd().endsWith("TAIL-MARK")).toBe(true);
    expect(result.output).toMatch(/… \[\d+ bytes of output omitted\] …/);
    expect(result.output).not.toContain("filler-1000\n");
    expect(result.output.length).toBeLessThan(300);
  });

  it("passes only the scrubbed environment to commands", async () => {
    const saved = { ...process.env };
    Object.assign(process.env, {
      GITHUB_TOKEN: "ghs_leaky",
      OPENAI_API_KEY: "sk-leaky",
      PRIVATE_KEY: "-----BEGIN",
      WEBHOOK_SECRET: "hook-leaky",
      GH_TOKEN: "gh-leaky",
      AWS_SECRET_ACCESS_KEY: "aws-leaky",
    });
    try {
      const result = await createCommandRunner().run("env", { cwd });
      const names = result.output
        .split("\n")
        .filter((line) => line.includes("="))
        .map((line) => line.slice(0, line.indexOf("=")));
      for (const name of [
        "GITHUB_TOKEN",
        "OPENAI_API_KEY",
        "PRIVATE_KEY",
        "WEBHOOK_SECRET",
        "GH_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
      ]) {
        expect(names).not.toContain(name);
      }
      expect(result.output).not.toContain("leaky");
      expect(result.output).toContain(`PATH=${saved.PATH}`);
      expect(result.output).toContain("CI=true");
      expect(result.output).toContain("GIT_TERMINAL_PROMPT=0");
    } finally {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
    }
  });
});

describe("scrubbedEnv", () => {
  it("keeps allow-listed variables and drops everything else", () => {
    const env = scrubbedEnv({
      PATH: "/usr/bin",
      HOME: "/home/u",
      GITHUB_TOKEN: "t",
      OPENAI_API_KEY: "k",
      PRIVATE_KEY: "p",
      WEBHOOK_SECRET: "w",
      APP_ID: "1",
      NODE_OPTIONS: "--require /tmp/evil.js",
    });
    expect(env).toEqual({ PATH: "/usr/bin", HOME: "/home/u", CI: "true", GIT_TERMINAL_PROMPT: "0" });
  });
});

describe("CappedOutput and truncateMiddle", () => {
  it("keeps everything under the cap", () => {
    const out = new CappedOutput(100);
    out.push(Buffer.from("abc"));
    out.push(Buffer.from("def"));
    expect(out.text()).toBe("abcdef");
  });

  it("keeps the first and last halves across many chunks", () => {
    const out = new CappedOutput(10);
    for (const chunk of ["01234", "56789", "abcde", "fghij", "KLMNO"]) out.push(Buffer.from(chunk));
    expect(out.text()).toBe("01234\n… [15 bytes of output omitted] …\nKLMNO");
  });

  it("truncates long text in the middle", () => {
    expect(truncateMiddle("short", 10)).toBe("short");
    expect(truncateMiddle("0123456789abcdefghij", 10)).toBe("01234\n… [10 characters omitted] …\nfghij");
  });
});
