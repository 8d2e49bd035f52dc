// The bubblewrap sandbox a command runs in: how it is launched, what it may see, and whether this
// machine can build it at all. The command runner (command-runner.ts) chooses between it and a plain launch.
import { spawnSync } from "node:child_process";
import { lstatSync, mkdtempSync, readlinkSync, realpathSync, rmSync, type Stats } from "node:fs";
import os from "node:os";
import path from "node:path";
import { commonDirOf, recordedGitDir } from "./untrusted-git.js";
import type { JobNetwork } from "./egress-proxy.js";
import { BRIDGE_URL, bridgedCommand, bridgeMounts } from "./sandbox-bridge.js";

interface Launch {
  file: string;
  args: string[];
  /** The proxy commands are pointed at, when the job's network allows any host. */
  proxy: string | null;
}

/** Why a command is not run: its job's network should have a proxy and has none. */
function notRunWithout(network: JobNetwork): { problem: string } | null {
  if (network.state.kind !== "failed") return null;
  return {
    problem: `Blueprint did not run this command: ${network.state.problem}. Commands never fall back to the host's network.`,
  };
}

/**
 * bubblewrap always gives the command a network namespace of its own. When the job's policy allows
 * any host, a bridge inside it reaches the job's proxy socket, and the proxy variables name it.
 */
export function sandboxedLaunch(
  bwrap: string,
  command: string,
  cwd: string,
  network: JobNetwork,
  options: { hide: readonly string[]; disableUserns: boolean; nodePath: string; scratch?: string | undefined },
): Launch | { problem: string } {
  const refused = notRunWithout(network);
  if (refused) return refused;
  const { state } = network;
  const scratch = options.scratch ? { scratch: options.scratch } : {};
  if (state.kind !== "proxy")
    return {
      file: bwrap,
      args: [
        ...sandboxArgs(cwd, { hide: options.hide, disableUserns: options.disableUserns, ...scratch }),
        "/bin/bash",
        "-c",
        command,
      ],
      proxy: null,
    };
  const node = realpathOrNull(options.nodePath);
  if (!node)
    return {
      problem: `Blueprint did not run this command: the Node binary for the sandbox's network bridge (${options.nodePath}) is missing. Commands never fall back to the host's network.`,
    };
  // Every job's socket directory is hidden like the App's own (the job's own socket is bound in below),
  // should they lie inside a directory the sandbox shows: no job reaches another job's proxy.
  const args = sandboxArgs(cwd, {
    hide: [...options.hide, state.socketRoot],
    disableUserns: options.disableUserns,
    mounts: bridgeMounts(state.socketPath, node),
    ...scratch,
  });
  return { file: bwrap, args: [...args, ...bridgedCommand(command)], proxy: BRIDGE_URL };
}

/** Without a sandbox the proxy variables are advisory: the command could also connect directly. */
export function plainLaunch(command: string, network: JobNetwork): Launch | { problem: string } {
  const refused = notRunWithout(network);
  if (refused) return refused;
  const { state } = network;
  const proxy = state.kind === "proxy" && state.tcpPort !== null ? `http://127.0.0.1:${state.tcpPort}` : null;
  return { file: "/bin/bash", args: ["-c", command], proxy };
}

/** The variable that names a command's scratch directory, when it has one. */
export const SCRATCH_VARIABLE = "BLUEPRINT_SCRATCH";

/** System directories a sandboxed command may read, where they exist: programs, libraries, /etc. */
const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"];

interface SandboxOptions {
  /**
   * Paths hidden even when they lie inside a system directory: the App's own directory, its work
   * directory (the job's own worktree and repository are bound back on top), its private key.
   */
  hide: readonly string[];
  /** bubblewrap 0.8+: no user namespaces inside (the kernel's user-namespace code is a common exploit path). */
  disableUserns: boolean;
  /** More read-only binds (the network bridge's socket directory and Node binary). */
  mounts?: readonly string[];
  /**
   * A writable directory outside the worktree that lasts between commands (a build step's scratch), bound at its own
   * path.
   */
  scratch?: string;
}

/**
 * What a sandboxed command sees: the system directories read-only, its own worktree writable,
 * a private /tmp and HOME, a new /proc with only its own processes, a network namespace of its own.
 * Nothing else under the host's file system: no other workspace, mirror or installation, no App
 * directory or `.env`. A worktree Blueprint created also gets its repository read-only (so the
 * agent's `git log` works), found from Blueprint's record, never from the worktree's `.git` file,
 * and without the other worktrees' admin directories.
 */
function sandboxArgs(workspace: string, options: SandboxOptions): string[] {
  const args: string[] = [];
  const exposed: string[] = [];
  for (const dir of SYSTEM_DIRS) {
    const stat = lstatOrNull(dir);
    if (stat?.isSymbolicLink()) args.push("--symlink", readlinkSync(dir), dir);
    else if (stat?.isDirectory()) {
      args.push("--ro-bind", dir, dir);
      exposed.push(dir);
    }
  }
  for (const hidden of options.hide) {
    // Mounts apply to the real path: a symlinked /opt or workdir must not dodge the check.
    const target = realpathOrNull(hidden);
    const inside = target !== null && exposed.some((root) => target === root || target.startsWith(`${root}/`));
    if (!inside) continue;
    const stat = lstatOrNull(target);
    if (stat?.isDirectory()) args.push("--tmpfs", target);
    else if (stat) args.push("--ro-bind", "/dev/null", target);
  }
  args.push("--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--dir", "/tmp/home");
  const gitDir = recordedGitDir(workspace);
  if (gitDir) {
    const common = commonDirOf(gitDir);
    args.push("--ro-bind", common, common);
    if (common !== gitDir) args.push("--tmpfs", path.join(common, "worktrees"), "--ro-bind", gitDir, gitDir);
  }
  args.push(
    "--bind",
    workspace,
    workspace,
    ...(options.scratch
      ? ["--bind", options.scratch, options.scratch, "--setenv", SCRATCH_VARIABLE, options.scratch]
      : []),
    ...(options.mounts ?? []),
    // Every namespace, the network's included: nothing gives a command the host's network.
    "--unshare-all",
    ...(options.disableUserns ? ["--unshare-user", "--disable-userns"] : []),
    "--cap-drop",
    "ALL",
    "--die-with-parent",
    "--new-session",
    "--setenv",
    "HOME",
    "/tmp/home",
    "--setenv",
    "TMPDIR",
    "/tmp",
    "--chdir",
    workspace,
  );
  return args;
}

function realpathOrNull(file: string): string | null {
  try {
    return realpathSync(file);
  } catch {
    return null;
  }
}

function lstatOrNull(file: string): Stats | null {
  try {
    return lstatSync(file);
  } catch {
    return null;
  }
}

const disableUsernsSupport = new Map<string, boolean>();

/**
 * Whether this bubblewrap can turn user namespaces off inside its sandbox: it knows
 * `--disable-userns` (0.8 and later) and may create the user namespace that needs (a set-user-id
 * bubblewrap on a host without unprivileged user namespaces may not). Without it, the sandbox is
 * built as before.
 */
export function supportsDisableUserns(bwrap: string): boolean {
  let known = disableUsernsSupport.get(bwrap);
  if (known === undefined) {
    const probe = spawnSync(
      bwrap,
      ["--ro-bind", "/", "/", "--unshare-all", "--unshare-user", "--disable-userns", "/bin/true"],
      { stdio: "ignore", timeout: 5000 },
    );
    known = probe.status === 0;
    disableUsernsSupport.set(bwrap, known);
  }
  return known;
}

/** bubblewrap, where it can build the real sandbox here; otherwise why not, in words an operator can act on. */
export function checkBubblewrap(explicit?: string): { path: string } | { problem: string } {
  // PATH is a fact of this process, not configuration: `bwrap` is looked up where a shell would find it.
  const candidates = explicit
    ? [explicit]
    : (process.env.PATH ?? "")
        .split(":")
        .filter(Boolean)
        .map((dir) => `${dir}/bwrap`);
  const found = candidates.filter((candidate) => lstatOrNull(candidate) !== null);
  if (found.length === 0) return { problem: "bubblewrap (`bwrap`) is not installed (not on PATH)" };
  const probeDir = mkdtempSync(path.join(os.tmpdir(), "blueprint-sandbox-probe-"));
  const problems: string[] = [];
  try {
    for (const candidate of found) {
      const probe = spawnSync(
        candidate,
        [...sandboxArgs(probeDir, { hide: [], disableUserns: supportsDisableUserns(candidate) }), "/bin/true"],
        { encoding: "utf8", timeout: 5000 },
      );
      if (probe.status === 0) return { path: candidate };
      problems.push(
        `${candidate}: ${(probe.stderr || probe.error?.message || `exit ${probe.status ?? "killed"}`).trim()}`,
      );
    }
  } finally {
    rmSync(probeDir, { recursive: true, force: true });
  }
  return { problem: `bubblewrap cannot build the sandbox here (${problems.join("; ")})` };
}
