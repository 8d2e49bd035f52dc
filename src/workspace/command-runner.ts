import { spawn, spawnSync } from "node:child_process";
import { lstatSync, mkdtempSync, readlinkSync, realpathSync, rmSync, type Stats } from "node:fs";
import os from "node:os";
import path from "node:path";
import { commonDirOf, recordedGitDir } from "./untrusted-git.js";
import { OFFLINE, type JobNetwork } from "./egress-proxy.js";
import { BRIDGE_URL, bridgedCommand, bridgeMounts, NETWORK_NOT_READY_EXIT, withProxy } from "./sandbox-bridge.js";

export interface CommandResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** stdout and stderr interleaved, capped with head and tail kept. */
  output: string;
  durationMs: number;
}

export interface RunOptions {
  cwd: string;
  timeoutMs?: number;
  /**
   * The job's network (egress-proxy.ts): without one, or offline, a sandboxed command has only its
   * own namespace's loopback. It never gets the host's network.
   */
  network?: JobNetwork;
  /** Stops the command early (e.g. `/cancel`). */
  signal?: AbortSignal;
}

export interface CommandRunner {
  /** "bwrap" when commands run inside bubblewrap, "plain" otherwise. */
  readonly isolation: "bwrap" | "plain";
  run(command: string, options: RunOptions): Promise<CommandResult>;
}

/** Variables a command may inherit; everything else (tokens, keys, secrets) is dropped. */
export const ENV_ALLOW_LIST = [
  "PATH",
  "HOME",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TZ",
  "TERM",
  "TMPDIR",
  "USER",
  "SHELL",
  "NODE_VERSION",
  "JAVA_HOME",
  "GOPATH",
  "GOROOT",
  "CARGO_HOME",
  "RUSTUP_HOME",
  "PYENV_ROOT",
  "VIRTUAL_ENV",
];

export function scrubbedEnv(source: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of ENV_ALLOW_LIST) {
    const value = source[name];
    if (value !== undefined) env[name] = value;
  }
  env.CI = "true";
  env.GIT_TERMINAL_PROMPT = "0";
  return env;
}

export interface CommandRunnerOptions {
  defaultTimeoutMs?: number;
  maxTimeoutMs?: number;
  outputCapBytes?: number;
  env?: NodeJS.ProcessEnv;
  /** Path of the bubblewrap binary: commands then run inside the sandbox (sandboxArgs). */
  bwrapPath?: string | null;
  /**
   * Paths the sandbox hides, directories or files (default: the App's working directory, where its
   * `.env` lives). The App adds its work directory and private key (create-deps.ts).
   */
  hide?: readonly string[];
  /** The Node binary the sandbox bridge runs on (default: this process's). */
  nodePath?: string;
}

/** Runs shell commands in their own process group, with a scrubbed environment, a timeout and an output cap. */
export function createCommandRunner(options: CommandRunnerOptions = {}): CommandRunner {
  const defaultTimeoutMs = options.defaultTimeoutMs ?? 120_000;
  const maxTimeoutMs = options.maxTimeoutMs ?? 600_000;
  const cap = options.outputCapBytes ?? 30_000;
  const env = options.env ?? scrubbedEnv();
  const bwrap = options.bwrapPath ?? null;
  const hide = options.hide ?? [process.cwd()];
  const disableUserns = bwrap ? supportsDisableUserns(bwrap) : false;
  const nodePath = options.nodePath ?? process.execPath;
  return {
    isolation: bwrap ? "bwrap" : "plain",
    run(command, { cwd, timeoutMs, network = OFFLINE, signal }) {
      const limit = Math.min(Math.max(timeoutMs ?? defaultTimeoutMs, 1000), maxTimeoutMs);
      const started = Date.now();
      const launch = bwrap ? sandboxedLaunch(bwrap, command, cwd, network, { hide, disableUserns, nodePath }) : plainLaunch(command, network);
      if ("problem" in launch) return Promise.resolve({ exitCode: NETWORK_NOT_READY_EXIT, signal: null, timedOut: false, output: `${launch.problem}\n`, durationMs: 0 });
      const { file, args, proxy } = launch;
      return new Promise((resolve) => {
        const child = spawn(file, args, { cwd, env: withProxy(env, proxy), detached: true, stdio: ["ignore", "pipe", "pipe"] });
        const output = new CappedOutput(cap);
        let timedOut = false;
        const killGroup = () => {
          if (child.pid === undefined) return;
          try {
            process.kill(-child.pid, "SIGKILL");
          } catch {
            // the group is already gone
          }
        };
        const timer = setTimeout(() => {
          timedOut = true;
          killGroup();
        }, limit);
        const onAbort = () => {
          output.push(Buffer.from("\n[stopped: the job was cancelled]\n"));
          killGroup();
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        if (signal?.aborted) onAbort();
        child.stdout.on("data", (chunk: Buffer) => output.push(chunk));
        child.stderr.on("data", (chunk: Buffer) => output.push(chunk));
        child.on("error", (error) => output.push(Buffer.from(`\n${error.message}\n`)));
        // "exit", not "close": a background process left holding stdout would otherwise keep us waiting.
        child.on("exit", (code, exitSignal) => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          // Background processes the command left behind must not outlive it.
          killGroup();
          const finish = () => resolve({ exitCode: code, signal: exitSignal, timedOut, output: output.text(), durationMs: Date.now() - started });
          // Let the pipes drain what was already written, but never wait long for them.
          const drained = setTimeout(finish, 200);
          child.once("close", () => {
            clearTimeout(drained);
            finish();
          });
        });
      });
    },
  };
}

interface Launch {
  file: string;
  args: string[];
  /** The proxy commands are pointed at, when the job's network allows any host. */
  proxy: string | null;
}

/** Why a command is not run: its job's network should have a proxy and has none. */
function notRunWithout(network: JobNetwork): { problem: string } | null {
  if (network.state.kind !== "failed") return null;
  return { problem: `Blueprint did not run this command: ${network.state.problem}. Commands never fall back to the host's network.` };
}

/**
 * bubblewrap always gives the command a network namespace of its own. When the job's policy allows
 * any host, a bridge inside it reaches the job's proxy socket, and the proxy variables name it.
 */
function sandboxedLaunch(bwrap: string, command: string, cwd: string, network: JobNetwork, options: { hide: readonly string[]; disableUserns: boolean; nodePath: string }): Launch | { problem: string } {
  const refused = notRunWithout(network);
  if (refused) return refused;
  const { state } = network;
  if (state.kind !== "proxy") return { file: bwrap, args: [...sandboxArgs(cwd, { hide: options.hide, disableUserns: options.disableUserns }), "/bin/bash", "-c", command], proxy: null };
  const node = realpathOrNull(options.nodePath);
  if (!node) return { problem: `Blueprint did not run this command: the Node binary for the sandbox's network bridge (${options.nodePath}) is missing. Commands never fall back to the host's network.` };
  // The socket's directory is hidden like the App's own, should it lie inside a system directory.
  const args = sandboxArgs(cwd, { hide: [...options.hide, path.dirname(state.socketPath)], disableUserns: options.disableUserns, mounts: bridgeMounts(state.socketPath, node) });
  return { file: bwrap, args: [...args, ...bridgedCommand(command)], proxy: BRIDGE_URL };
}

/** Without a sandbox the proxy variables are advisory: the command could also connect directly. */
function plainLaunch(command: string, network: JobNetwork): Launch | { problem: string } {
  const refused = notRunWithout(network);
  if (refused) return refused;
  const { state } = network;
  const proxy = state.kind === "proxy" && state.tcpPort !== null ? `http://127.0.0.1:${state.tcpPort}` : null;
  return { file: "/bin/bash", args: ["-c", command], proxy };
}

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
    "--bind", workspace, workspace,
    ...(options.mounts ?? []),
    // Every namespace, the network's included: nothing gives a command the host's network.
    "--unshare-all",
    ...(options.disableUserns ? ["--unshare-user", "--disable-userns"] : []),
    "--cap-drop", "ALL",
    "--die-with-parent",
    "--new-session",
    "--setenv", "HOME", "/tmp/home",
    "--setenv", "TMPDIR", "/tmp",
    "--chdir", workspace,
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
function supportsDisableUserns(bwrap: string): boolean {
  let known = disableUsernsSupport.get(bwrap);
  if (known === undefined) {
    const probe = spawnSync(bwrap, ["--ro-bind", "/", "/", "--unshare-all", "--unshare-user", "--disable-userns", "/bin/true"], { stdio: "ignore", timeout: 5000 });
    known = probe.status === 0;
    disableUsernsSupport.set(bwrap, known);
  }
  return known;
}

/** bubblewrap, where it can build the real sandbox here; otherwise why not, in words an operator can act on. */
export function checkBubblewrap(explicit?: string): { path: string } | { problem: string } {
  const candidates = explicit ? [explicit] : (process.env.PATH ?? "").split(":").filter(Boolean).map((dir) => `${dir}/bwrap`);
  const found = candidates.filter((candidate) => lstatOrNull(candidate) !== null);
  if (found.length === 0) return { problem: "bubblewrap (`bwrap`) is not installed (not on PATH)" };
  const probeDir = mkdtempSync(path.join(os.tmpdir(), "blueprint-sandbox-probe-"));
  const problems: string[] = [];
  try {
    for (const candidate of found) {
      const probe = spawnSync(candidate, [...sandboxArgs(probeDir, { hide: [], disableUserns: supportsDisableUserns(candidate) }), "/bin/true"], { encoding: "utf8", timeout: 5000 });
      if (probe.status === 0) return { path: candidate };
      problems.push(`${candidate}: ${(probe.stderr || probe.error?.message || `exit ${probe.status ?? "killed"}`).trim()}`);
    }
  } finally {
    rmSync(probeDir, { recursive: true, force: true });
  }
  return { problem: `bubblewrap cannot build the sandbox here (${problems.join("; ")})` };
}

/** Keeps the first and last halves of a stream once it outgrows the cap. */
export class CappedOutput {
  private head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer = Buffer.alloc(0);
  private dropped = 0;

  constructor(private readonly cap: number) {}

  push(chunk: Buffer): void {
    const half = Math.floor(this.cap / 2);
    if (this.headBytes < half) {
      const take = chunk.subarray(0, half - this.headBytes);
      this.head.push(take);
      this.headBytes += take.length;
      chunk = chunk.subarray(take.length);
    }
    if (chunk.length === 0) return;
    const combined = Buffer.concat([this.tail, chunk]);
    const keep = combined.subarray(Math.max(0, combined.length - half));
    this.dropped += combined.length - keep.length;
    this.tail = Buffer.from(keep);
  }

  text(): string {
    const head = Buffer.concat(this.head).toString("utf8");
    const tail = this.tail.toString("utf8");
    if (this.dropped === 0) return head + tail;
    return `${head}\n… [${this.dropped} bytes of output omitted] …\n${tail}`;
  }
}

/** Keeps the head and tail of a long text (for tool results and comments). */
export function truncateMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n… [${text.length - 2 * half} characters omitted] …\n${text.slice(-half)}`;
}
