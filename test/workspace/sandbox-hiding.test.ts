import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadEnv } from "../../src/config/env.js";
import { createWorkflowDeps } from "../../src/app/create-deps.js";
import type { Logger } from "../../src/workflow/deps.js";
import { checkBubblewrap, createCommandRunner } from "../../src/workspace/command-runner.js";
import { RepoCache } from "../../src/workspace/repo-cache.js";
import { createBareRepo } from "../helpers/git-repo.js";

// Real bubblewrap (the CI installs it; these tests never skip). From the security review of issue #10.
const check = checkBubblewrap();
const runner = createCommandRunner({ bwrapPath: "path" in check ? check.path : null });
const quiet: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The App's engine as create-deps.ts wires it, with its work directory (and key) where the test says. */
function appDeps(env: Record<string, string>) {
  return createWorkflowDeps(
    loadEnv({ BLUEPRINT_SANDBOX: "bwrap", BLUEPRINT_STATE_SECRET: "sandbox-hiding-state-secret", ...env }),
    quiet,
  );
}

describe("what the sandbox hides inside the system directories it shows", () => {
  it("has bubblewrap here", () => expect(runner.isolation).toBe("bwrap"));

  it("a BLUEPRINT_WORKDIR under /opt: the job sees its own worktree and repository, no other job's tree and no other installation's mirror", async () => {
    mkdirSync("/opt", { recursive: true });
    const workdir = mkdtempSync("/opt/blueprint-hiding-work-");
    cleanups.push(() => rmSync(workdir, { recursive: true, force: true }));
    const deps = appDeps({ BLUEPRINT_WORKDIR: workdir, BLUEPRINT_WORKTREE_POOL: "0" });
    const tenantA = createBareRepo({ "README.md": "# a\n" });
    const tenantB = createBareRepo({ "README.md": "# b\n", "secret.txt": "tenant-B-private-source\n" });
    const a = await deps.repoCache.prepare({ cloneUrl: tenantA.url, ref: "refs/heads/main" });
    const b = await deps.repoCache.prepare({ cloneUrl: tenantB.url, ref: "refs/heads/main" });
    cleanups.push(
      () => a.dispose(),
      () => b.dispose(),
    );
    const result = await deps.runner.run(
      `cat ${b.dir}/secret.txt 2>&1; ls ${workdir}/mirrors 2>&1; echo mine > mine.txt; git log --oneline | head -1`,
      { cwd: a.dir },
    );
    expect(result.output, "another tenant's worktree").not.toContain("tenant-B-private-source");
    expect(result.output, "the other tenant's mirror").not.toContain(
      path.basename(deps.repoCache.mirrorPath(tenantB.url)),
    );
    // Its own worktree stays writable and its own repository readable.
    expect(result.output).toContain("initial commit");
    expect(await a.changes()).toEqual(["mine.txt"]);
  });

  it("PRIVATE_KEY_PATH under /etc: neither the key nor what lies beside it is readable; the rest of /etc is", async () => {
    const dir = mkdtempSync("/etc/blueprint-hiding-secrets-");
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const key = path.join(dir, "private-key.pem");
    writeFileSync(key, "-----BEGIN RSA PRIVATE KEY----- fake-key\n", { mode: 0o644 });
    writeFileSync(path.join(dir, "app.env"), "WEBHOOK_SECRET=beside-the-key\n", { mode: 0o644 });
    const workspace = mkdtempSync(path.join(os.tmpdir(), "sandbox-hiding-ws-"));
    cleanups.push(() => rmSync(workspace, { recursive: true, force: true }));
    const deps = appDeps({
      PRIVATE_KEY_PATH: key,
      BLUEPRINT_WORKDIR: mkdtempSync(path.join(os.tmpdir(), "sandbox-hiding-work-")),
    });
    const result = await deps.runner.run(`cat ${key} ${dir}/app.env 2>&1; head -c 4 /etc/passwd`, { cwd: workspace });
    expect(result.output).not.toContain("fake-key");
    expect(result.output).not.toContain("beside-the-key");
    expect(result.output).toContain("root");
  });

  it("a key file directly in /etc is hidden on its own", async () => {
    const key = `/etc/blueprint-hiding-key-${process.pid}.pem`;
    writeFileSync(key, "-----BEGIN RSA PRIVATE KEY----- top-level-fake-key\n", { mode: 0o644 });
    cleanups.push(() => rmSync(key, { force: true }));
    const workspace = mkdtempSync(path.join(os.tmpdir(), "sandbox-hiding-ws-"));
    cleanups.push(() => rmSync(workspace, { recursive: true, force: true }));
    const deps = appDeps({
      PRIVATE_KEY_PATH: key,
      BLUEPRINT_WORKDIR: mkdtempSync(path.join(os.tmpdir(), "sandbox-hiding-work-")),
    });
    const result = await deps.runner.run(`cat ${key} 2>&1; echo; head -c 4 /etc/passwd`, { cwd: workspace });
    expect(result.output).not.toContain("top-level-fake-key");
    expect(result.output).toContain("root");
  });

  it("a set-user-id file the agent leaves in its worktree is out of other local accounts' reach: the work directory is 0700, also one that existed before", async () => {
    const workdir = path.join(os.tmpdir(), `sandbox-hiding-suid-${process.pid}`);
    mkdirSync(path.join(workdir, "jobs"), { recursive: true, mode: 0o755 });
    cleanups.push(() => rmSync(workdir, { recursive: true, force: true }));
    const repo = createBareRepo({ "README.md": "# r\n" });
    const cache = new RepoCache(workdir, { poolSize: 0 });
    const ws = await cache.prepare({ cloneUrl: repo.url, ref: "refs/heads/main" });
    cleanups.push(() => ws.dispose());
    for (const dir of [workdir, path.join(workdir, "jobs"), path.join(workdir, "mirrors")])
      expect(statSync(dir).mode & 0o777, dir).toBe(0o700);
    const made = await runner.run("cp /usr/bin/id ./tool && chmod 4755 ./tool && echo made", { cwd: ws.dir });
    expect(made.output).toContain("made");
    let out = "";
    try {
      out = execFileSync("runuser", ["-u", "nobody", "--", path.join(ws.dir, "tool"), "-u"], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      }).trim();
    } catch (error) {
      out = `could not run: ${error instanceof Error ? error.message : String(error)}`;
    }
    expect(out, "another account ran the agent's file").toMatch(/could not run: [\s\S]*Permission denied/);
  });

  it("a command cannot make user namespaces of its own inside the sandbox, and set-user-id bits give it nothing (no_new_privs)", async () => {
    const workspace = mkdtempSync(path.join(os.tmpdir(), "sandbox-hiding-ws-"));
    cleanups.push(() => rmSync(workspace, { recursive: true, force: true }));
    const result = await runner.run("grep NoNewPrivs /proc/self/status; unshare -U true 2>&1 && echo NESTED-USERNS", {
      cwd: workspace,
    });
    expect(result.output).not.toContain("NESTED-USERNS");
    expect(result.output).toMatch(/unshare failed/);
    expect(result.output).toMatch(/NoNewPrivs:\s+1/);
  });

  it("an older bubblewrap without --disable-userns still builds the sandbox, without that option", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "sandbox-hiding-oldbwrap-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const real = "path" in check ? check.path : "bwrap";
    const old = path.join(dir, "bwrap");
    writeFileSync(
      old,
      `#!/bin/sh\nfor a in "$@"; do [ "$a" = --disable-userns ] && { echo "bwrap: Unknown option --disable-userns" >&2; exit 1; }; done\nexec ${real} "$@"\n`,
    );
    chmodSync(old, 0o755);
    expect(checkBubblewrap(old)).toEqual({ path: old });
    const workspace = mkdtempSync(path.join(os.tmpdir(), "sandbox-hiding-ws-"));
    cleanups.push(() => rmSync(workspace, { recursive: true, force: true }));
    const result = await createCommandRunner({ bwrapPath: old }).run(
      "echo in > inside.txt && ls /proc | grep -c '^[0-9]'",
      { cwd: workspace },
    );
    expect(result.exitCode).toBe(0);
    expect(Number(result.output.trim())).toBeLessThan(6);
  });
});
