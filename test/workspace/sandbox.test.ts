import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createCommandRunner, checkBubblewrap } from "../../src/workspace/command-runner.js";
import { openJobNetwork } from "../../src/workspace/egress-proxy.js";
import { RepoCache } from "../../src/workspace/repo-cache.js";
import type { Workspace } from "../../src/workspace/workspace.js";
import { FAKE_SECRETS, plantSecrets } from "../helpers/attack.js";
import { createBareRepo, tempDir } from "../helpers/git-repo.js";

// .ci/run installs bubblewrap and fails without it: these tests never skip.
const sandboxCheck = checkBubblewrap();
const bwrap = "path" in sandboxCheck ? sandboxCheck.path : null;
const runner = createCommandRunner({ bwrapPath: bwrap });
const plain = createCommandRunner();

const workspace = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "sandbox-ws-"));
  writeFileSync(path.join(dir, "file.txt"), "inside\n");
  return dir;
};

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("command sandbox", () => {
  it("has bubblewrap here (install it: the sandbox tests must run)", () => {
    expect(bwrap, "bubblewrap (bwrap) is missing or cannot start here").not.toBeNull();
    expect(checkBubblewrap("/nonexistent/bwrap")).toEqual({ problem: expect.stringMatching(/not installed/) });
    expect(runner.isolation).toBe("bwrap");
    expect(plain.isolation).toBe("plain");
  });

  it("lets commands write their workspace, and shows nothing of the host outside the system directories", async () => {
    const dir = workspace();
    const outside = mkdtempSync(path.join(os.homedir(), ".sandbox-outside-"));
    cleanups.push(() => rmSync(outside, { recursive: true, force: true }));
    writeFileSync(path.join(outside, "secret.txt"), "host file\n");
    const result = await runner.run(
      `echo changed > file.txt; cat ${outside}/secret.txt; echo escaped > ${outside}/x.txt; ls ${process.cwd()}/package.json; touch /usr/x; echo home=$HOME tmp=$TMPDIR; echo mine > $HOME/h && cat $HOME/h`,
      { cwd: dir },
    );
    expect(readFileSync(path.join(dir, "file.txt"), "utf8")).toBe("changed\n");
    expect(result.output).not.toContain("host file");
    expect(existsSync(path.join(outside, "x.txt"))).toBe(false);
    expect(result.output).toContain(`ls: cannot access '${process.cwd()}/package.json': No such file or directory`); // the App's own directory
    expect(result.output).toMatch(/touch: cannot touch '\/usr\/x': (Read-only file system|Permission denied)/);
    expect(result.output).toContain("home=/tmp/home tmp=/tmp");
    expect(result.output).toContain("mine");
  });

  it("hides the App's directory even where it lies inside a system directory", async () => {
    mkdirSync("/opt", { recursive: true });
    const app = mkdtempSync("/opt/blueprint-app-");
    cleanups.push(() => rmSync(app, { recursive: true, force: true }));
    writeFileSync(path.join(app, ".env"), `PRIVATE_KEY=${FAKE_SECRETS.PRIVATE_KEY}\n`);
    const command = `cat ${app}/.env`;
    expect(
      (await createCommandRunner({ bwrapPath: bwrap, hide: [] }).run(command, { cwd: workspace() })).output,
    ).toContain(FAKE_SECRETS.PRIVATE_KEY); // control
    const hidden = await createCommandRunner({ bwrapPath: bwrap, hide: [app] }).run(command, { cwd: workspace() });
    expect(hidden.output).not.toContain(FAKE_SECRETS.PRIVATE_KEY);
    expect(hidden.output).toContain("No such file or directory");
  });

  describe("(d) another process's environment", () => {
    let restore: () => void = () => undefined;
    beforeAll(() => {
      restore = plantSecrets();
    });
    afterAll(() => restore());

    it("is out of reach: a new /proc shows only the command's own processes, and its environment is scrubbed", async () => {
      // Stands in for the App: a process started with the secrets in its environment.
      const app = spawn("sleep", ["30"], { env: { ...process.env, ...FAKE_SECRETS }, stdio: "ignore" });
      cleanups.push(() => void app.kill("SIGKILL"));
      const loot = tempDir("sandbox-loot-");
      const attack = `cat /proc/${app.pid}/environ; cat /proc/$PPID/environ; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done > ${loot}/environ; env; echo "processes=$(ls -d /proc/[0-9]* | wc -l)"`;
      const result = await runner.run(attack, { cwd: workspace() });
      for (const secret of Object.values(FAKE_SECRETS)) expect(result.output).not.toContain(secret);
      expect(existsSync(path.join(loot, "environ"))).toBe(false);
      // Named, not the last line: the command's error output may arrive after it.
      expect(Number(/^processes=(\d+)$/m.exec(result.output)?.[1])).toBeLessThan(6);
      // Control: the plain runner (BLUEPRINT_SANDBOX=none) reads the App's environment.
      expect((await plain.run(`tr '\\0' '\\n' < /proc/${app.pid}/environ`, { cwd: workspace() })).output).toContain(
        FAKE_SECRETS.PRIVATE_KEY,
      );
    });
  });

  describe("(e) other jobs and installations under the work directory", () => {
    const open: Workspace[] = [];
    afterAll(async () => {
      for (const ws of open) await ws.dispose();
    });

    it("are invisible; the job's own repository is readable, not writable, whatever its .git pointer says", async () => {
      // Outside /tmp, as in the Docker image (/var/lib/blueprint): the private /tmp alone would hide it.
      const workdir = mkdtempSync(path.join("/var/tmp", "blueprint-workdir-"));
      cleanups.push(() => rmSync(workdir, { recursive: true, force: true }));
      const cache = new RepoCache(workdir, { poolSize: 0 });
      const repoA = createBareRepo({ "a.txt": "tenant A\n" });
      const repoB = createBareRepo({ "b.txt": "tenant B secret\n" });
      const mine = await cache.prepare({ cloneUrl: repoA.url, ref: "refs/heads/main" });
      const sibling = await cache.prepare({ cloneUrl: repoA.url, ref: "refs/heads/main" });
      const other = await cache.prepare({ cloneUrl: repoB.url, ref: "refs/heads/main" });
      open.push(mine, sibling, other);
      const mirrorA = cache.mirrorPath(repoA.url);
      const mirrorB = cache.mirrorPath(repoB.url);
      writeFileSync(path.join(sibling.dir, "job2.txt"), "another job's work\n");

      const probe = [
        `cat ${sibling.dir}/job2.txt`,
        `cat ${other.dir}/b.txt`,
        `cat ${mirrorB}/config`,
        `echo "jobs: $(ls ${workdir}/jobs)"`,
        `echo "worktrees: $(ls ${mirrorA}/worktrees)"`,
        "git log --format=subject:%s -1",
        `touch ${mirrorA}/evil`,
      ].join("; ");
      const first = await runner.run(probe, { cwd: mine.dir });
      expect(first.output).not.toContain("another job's work");
      expect(first.output).not.toContain("tenant B");
      expect(first.output).toContain(`jobs: ${path.basename(mine.dir)}\n`);
      expect(first.output).toContain(`worktrees: ${path.basename(mine.dir)}\n`);
      expect(first.output).toContain("subject:initial commit");
      expect(existsSync(path.join(mirrorA, "evil"))).toBe(false);

      // The agent points its .git at the other installation's worktree: the next command still sees only its own.
      const adminB = readFileSync(path.join(other.dir, ".git"), "utf8");
      await runner.run(`printf '%s' '${adminB}' > .git`, { cwd: mine.dir });
      const second = await runner.run(`cat ${mirrorB}/config; cat ${other.dir}/b.txt; git log -1 --format=%s`, {
        cwd: mine.dir,
      });
      expect(second.output).not.toContain("tenant B");
      expect(second.output).not.toMatch(/\[remote "origin"\]/);
    });
  });

  it("has a network of its own: the host's loopback is out of reach, even when the job's allow-list names that very address", async () => {
    const server = net.createServer((socket) => socket.end("hello\n"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as net.AddressInfo).port;
    const probe = `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3 || echo "no network"`;
    // Allowed, it is reached through the job's proxy only (test/workspace/sandbox-network.test.ts), never directly.
    const network = await openJobNetwork({
      allow: [{ kind: "address", address: "127.0.0.1", port }],
      exempt: [{ address: "127.0.0.1", port }],
    });
    try {
      const closed = await runner.run(probe, { cwd: workspace() });
      expect(closed.output).toContain("no network");
      const allowed = await runner.run(probe, { cwd: workspace(), network });
      expect(allowed.output).toContain("no network");
      expect(allowed.output).not.toContain("hello");
      // Control: the plain runner (BLUEPRINT_SANDBOX=none) reaches it.
      expect((await plain.run(probe, { cwd: workspace() })).output).toContain("hello");
    } finally {
      await network.close();
      server.close();
    }
  });
});
