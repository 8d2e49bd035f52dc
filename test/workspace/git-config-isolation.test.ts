import { execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RepoCache } from "../../src/workspace/repo-cache.js";
import { createBareRepo, tempDir } from "../helpers/git-repo.js";

/**
 * Blueprint's git reads no system and no global config (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL), so
 * what the machine's /etc/gitconfig or a ~/.gitconfig in the HOME it is given says never runs: here an
 * askpass program, a credential helper and hooks, met on a clone that GitHub answers 401 (an expired
 * token) and on a commit. Real git; the machine's system config is planted through GIT_CONFIG_SYSTEM
 * (what git reads instead of /etc/gitconfig), set by a `git` on PATH that then runs the real one, and
 * the global one in the HOME that wrapper sees Blueprint's git get. Each test ends with the control:
 * plain git with the same config runs the trap.
 */

const REAL_GIT = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
const savedPath = process.env.PATH;
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  process.env.PATH = savedPath;
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Trap {
  script: string;
  /** One line per run: the script and its arguments (askpass's prompt, a credential helper's `get`, a hook's). */
  ran(): string[];
}

/**
 * A program that notes each time it runs and prints a made-up answer (it never reads stdin: askpass's is git's pipe).
 */
function trap(): Trap {
  const dir = tempDir("git-config-trap-");
  const script = path.join(dir, "trap.sh");
  const log = path.join(dir, "ran");
  writeFileSync(script, `#!/bin/sh\necho "$0 $*" >> "${log}"\necho made-up\n`, { mode: 0o755 });
  return { script, ran: () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []) };
}

/** Config that runs the trap when git needs credentials (askpass, a helper) or reaches a hook. */
function trapConfig(planted: Trap): string {
  const hooks = tempDir("git-config-hooks-");
  for (const hook of ["pre-commit", "post-commit", "post-checkout", "reference-transaction"]) {
    writeFileSync(path.join(hooks, hook), `#!/bin/sh\nexec "${planted.script}" "$@"\n`, { mode: 0o755 });
  }
  return `[core]\n\taskPass = ${planted.script}\n\thooksPath = ${hooks}\n[credential]\n\thelper = !${planted.script}\n`;
}

/** A git host that refuses every request with 401, as GitHub answers a token that has expired. */
async function refusingHost(): Promise<string> {
  const server = http.createServer((_, res) =>
    res.writeHead(401, { "www-authenticate": 'Basic realm="GitHub"' }).end(),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/octo/repo.git`;
}

/**
 * Puts a `git` first on PATH that records the HOME it was given, sets GIT_CONFIG_SYSTEM to
 * `systemConfig` (this machine's system config, as far as git knows) and runs the real git.
 */
function machineGit(systemConfig: string): { homes(): string[] } {
  const dir = tempDir("git-config-path-");
  const record = path.join(dir, "homes");
  writeFileSync(record, "");
  writeFileSync(
    path.join(dir, "git"),
    `#!/bin/sh\nprintf '%s\\n' "$HOME" >> "${record}"\nGIT_CONFIG_SYSTEM="${systemConfig}" exec "${REAL_GIT}" "$@"\n`,
  );
  chmodSync(path.join(dir, "git"), 0o755);
  process.env.PATH = `${dir}:${savedPath ?? ""}`;
  return { homes: () => [...new Set(readFileSync(record, "utf8").split("\n").filter(Boolean))] };
}

/** Blueprint's git meets the traps: a job's commit, then a clone the host refuses (its token has expired). */
async function blueprintMeetsTheTraps(cache: RepoCache, repoUrl: string, refusingUrl: string): Promise<void> {
  const ws = await cache.prepare({ cloneUrl: repoUrl, ref: "refs/heads/main", token: "ghs_fake-expired-token" });
  cleanups.push(() => ws.dispose());
  writeFileSync(path.join(ws.dir, "notes.txt"), "work\n");
  expect(await ws.commitAll("S1: notes", { name: "blueprint[bot]", email: "bot@example.test" })).not.toBeNull();
  await expect(
    cache.prepare({ cloneUrl: refusingUrl, ref: "refs/heads/main", token: "ghs_fake-expired-token" }),
  ).rejects.toThrow(/could not fetch the repository/);
}

/**
 * Plain git, with the machine's config as `env` sets it, cloning from the refusing host (which this process serves: no
 * sync spawn).
 */
function plainGitClones(refusingUrl: string, env: Record<string, string>): Promise<void> {
  const child = spawn(REAL_GIT, ["clone", "--quiet", refusingUrl, path.join(tempDir("git-config-control-"), "clone")], {
    env: { PATH: savedPath ?? "", GIT_TERMINAL_PROMPT: "0", ...env },
    stdio: "ignore",
  });
  return new Promise((resolve) => child.on("close", () => resolve()));
}

describe("Blueprint's git and the machine's git config", () => {
  it("reads no system config (/etc/gitconfig): its askpass, credential helper and hooks never run", async () => {
    const repo = createBareRepo({ "README.md": "# r\n" });
    const refusingUrl = await refusingHost();
    const planted = trap();
    const systemConfig = path.join(tempDir("git-config-etc-"), "gitconfig");
    writeFileSync(systemConfig, trapConfig(planted));
    machineGit(systemConfig);

    await blueprintMeetsTheTraps(
      new RepoCache(tempDir("git-config-system-work-"), { poolSize: 0 }),
      repo.url,
      refusingUrl,
    );
    expect(planted.ran()).toEqual([]);

    await plainGitClones(refusingUrl, { HOME: tempDir("git-config-plain-home-"), GIT_CONFIG_SYSTEM: systemConfig });
    expect(planted.ran().join("\n")).toMatch(/Username for/);
  });

  it("reads no global config, not even one in the HOME it is given: its askpass, credential helper and hooks never run", async () => {
    const repo = createBareRepo({ "README.md": "# r\n" });
    const refusingUrl = await refusingHost();
    const planted = trap();
    const git = machineGit("/dev/null");
    const cache = new RepoCache(tempDir("git-config-global-work-"), { poolSize: 0 });
    // A first job shows which HOME Blueprint's git gets; something then writes a global config there.
    await cache.sync({ cloneUrl: repo.url, ref: "refs/heads/main" });
    const [home = "", ...others] = git.homes();
    expect(others).toEqual([]);
    expect(home).not.toBe("");
    mkdirSync(path.join(home, "git"), { recursive: true });
    for (const file of [path.join(home, ".gitconfig"), path.join(home, "git", "config")]) {
      writeFileSync(file, trapConfig(planted));
      cleanups.push(() => rmSync(file));
    }

    await blueprintMeetsTheTraps(cache, repo.url, refusingUrl);
    expect(planted.ran()).toEqual([]);

    await plainGitClones(refusingUrl, { HOME: home });
    expect(planted.ran().join("\n")).toMatch(/Username for/);
  });
});
