import { mkdirSync, mkdtempSync, writeFileSync, readFileSync, existsSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { createCommandRunner, findBubblewrap } from "../../src/workspace/command-runner.js";

const bwrap = findBubblewrap();

describe("command sandbox", () => {
  it("falls back to the plain runner when bubblewrap is missing", () => {
    expect(findBubblewrap("/nonexistent/bwrap")).toBeNull();
    expect(createCommandRunner({ bwrapPath: null }).isolation).toBe("plain");
  });

  // .ci/run installs bubblewrap, so CI always runs these; a developer machine without it runs the fallback test above.
  describe.runIf(bwrap !== null)("inside bubblewrap", () => {
    const runner = createCommandRunner({ bwrapPath: bwrap });
    const workspace = () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), "sandbox-ws-"));
      writeFileSync(path.join(dir, "file.txt"), "inside\n");
      return dir;
    };

    it("lets commands write the workspace but nothing else", async () => {
      const dir = workspace();
      const outside = mkdtempSync(path.join(os.homedir(), ".sandbox-outside-"));
      const result = await runner.run(`echo changed > file.txt && echo escaped > ${outside}/x.txt; echo "exit=$?"`, { cwd: dir });
      expect(runner.isolation).toBe("bwrap");
      expect(readFileSync(path.join(dir, "file.txt"), "utf8")).toBe("changed\n");
      expect(existsSync(path.join(outside, "x.txt"))).toBe(false);
      expect(result.output).toMatch(/Read-only file system|Permission denied/);
    });

    it("keeps a worktree's repository readable but not writable", async () => {
      const dir = workspace();
      const repo = mkdtempSync(path.join(os.tmpdir(), "sandbox-repo-"));
      mkdirSync(path.join(repo, "worktrees", "job"), { recursive: true });
      writeFileSync(path.join(repo, "worktrees", "job", "HEAD"), "ref\n");
      writeFileSync(path.join(dir, ".git"), `gitdir: ${path.join(repo, "worktrees", "job")}\n`);
      const result = await runner.run(`cat ${repo}/worktrees/job/HEAD && touch ${repo}/evil; echo "touch=$?"`, { cwd: dir });
      expect(result.output).toContain("ref");
      expect(result.output).toContain("touch=1");
      expect(existsSync(path.join(repo, "evil"))).toBe(false);
    });

    it("has no network unless the repository allows it", async () => {
      const server = net.createServer((socket) => socket.end("hello\n"));
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const port = (server.address() as net.AddressInfo).port;
      const probe = `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3 || echo "no network"`;
      try {
        const closed = await runner.run(probe, { cwd: workspace() });
        expect(closed.output).toContain("no network");
        const open = await runner.run(probe, { cwd: workspace(), network: true });
        expect(open.output).toContain("hello");
      } finally {
        server.close();
      }
    });
  });
});
