import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type http from "node:http";
import os from "node:os";
import path from "node:path";
import { copyTemplate } from "../../helpers/templates.js";
import { readBranch } from "./git-refs.js";

/** A bare repository the double serves over smart HTTP, with helpers to look inside it. */
export interface ServedRepository {
  owner: string;
  name: string;
  /** Path of the bare repository on disk. */
  dir: string;
  defaultBranch: string;
  /** The commit a branch points at, or null when the branch does not exist. */
  head(branch: string): string | null;
  /** Commit subjects on a branch, newest first. */
  log(branch: string): string[];
  /** A file's content on a branch, or null when it is not there. */
  show(branch: string, file: string): string | null;
  /** Commits on `head` that are not on `base`. */
  commitsAhead(base: string, head: string): number;
  /** The full id of the commit an id (full or abbreviated) names, or null when there is no such commit. */
  commitOf(id: string): string | null;
  git(args: string[]): string;
}

/** Git without the machine's own configuration, so the double behaves the same everywhere. */
const ISOLATED_GIT = {
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_TERMINAL_PROMPT: "0",
};

/** Creates `<root>/<owner>/<name>.git` with one commit holding `files` on the default branch. */
export function createServedRepository(
  root: string,
  owner: string,
  name: string,
  files: Record<string, string>,
  defaultBranch = "main",
): ServedRepository {
  // A bare repository made once per process for each set of files and default branch (seven git processes), copied.
  const dir = path.join(root, owner, `${name}.git`);
  mkdirSync(path.dirname(dir), { recursive: true });
  copyTemplate(
    JSON.stringify(["served", defaultBranch, Object.entries(files).sort()]),
    (template) => makeBareRepository(template, files, defaultBranch),
    dir,
  );
  return servedRepository(dir, owner, name, defaultBranch);
}

function makeBareRepository(dir: string, files: Record<string, string>, defaultBranch: string): void {
  mkdirSync(dir, { recursive: true });
  const run = (cwd: string, args: string[], extra: Record<string, string> = {}) =>
    execFileSync("git", args, {
      cwd,
      env: { PATH: process.env.PATH ?? "", HOME: os.tmpdir(), ...ISOLATED_GIT, ...extra },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
  run(dir, ["init", "--quiet", "--bare", `--initial-branch=${defaultBranch}`]);
  // What a GitHub remote allows: blobless clones and fetching any object by id (lazy blob fetches).
  run(dir, ["config", "uploadpack.allowFilter", "true"]);
  run(dir, ["config", "uploadpack.allowAnySHA1InWant", "true"]);

  const seed = mkdtempSync(path.join(os.tmpdir(), "github-double-seed-"));
  try {
    run(seed, ["init", "--quiet", `--initial-branch=${defaultBranch}`]);
    for (const [file, content] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(seed, file)), { recursive: true });
      writeFileSync(path.join(seed, file), content);
    }
    run(seed, ["add", "--all"]);
    const identity = {
      GIT_AUTHOR_NAME: "Octocat",
      GIT_AUTHOR_EMAIL: "octocat@example.test",
      GIT_COMMITTER_NAME: "Octocat",
      GIT_COMMITTER_EMAIL: "octocat@example.test",
    };
    run(seed, ["commit", "--quiet", "-m", "initial commit"], identity);
    run(seed, ["push", "--quiet", dir, `HEAD:refs/heads/${defaultBranch}`]);
  } finally {
    rmSync(seed, { recursive: true, force: true });
  }
}

/** `<root>/<owner>/<name>.git` as a copy of another served repository (same commits; cheaper than creating one). */
export function copyServedRepository(
  template: ServedRepository,
  root: string,
  owner: string,
  name: string,
): ServedRepository {
  const dir = path.join(root, owner, `${name}.git`);
  mkdirSync(path.dirname(dir), { recursive: true });
  cpSync(template.dir, dir, { recursive: true });
  return servedRepository(dir, owner, name, template.defaultBranch);
}

function servedRepository(dir: string, owner: string, name: string, defaultBranch: string): ServedRepository {
  const run = (cwd: string, args: string[]) =>
    execFileSync("git", args, {
      cwd,
      env: { PATH: process.env.PATH ?? "", HOME: os.tmpdir(), ...ISOLATED_GIT },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
  const git = (args: string[]) => run(dir, args);
  const tryGit = (args: string[]) => {
    try {
      return git(args);
    } catch {
      return null;
    }
  };
  // Commits found once by their full id: nothing here removes objects, so they stay (no git process asked again).
  const commits = new Set<string>();
  return {
    owner,
    name,
    dir,
    defaultBranch,
    git,
    // Read from the ref files (the double is asked for branches on every request); git only for what is not plain.
    head: (branch) => {
      const read = readBranch(dir, branch);
      if (read !== undefined) return read;
      return tryGit(["rev-parse", "--verify", "--quiet", `refs/heads/${branch}^{commit}`])?.trim() || null;
    },
    log: (branch) =>
      tryGit(["log", "--format=%s", `refs/heads/${branch}`])
        ?.trim()
        .split("\n") ?? [],
    show: (branch, file) => tryGit(["show", `refs/heads/${branch}:${file}`]),
    commitsAhead: (base, head) =>
      Number(tryGit(["rev-list", "--count", `refs/heads/${base}..refs/heads/${head}`])?.trim() ?? 0),
    commitOf: (id) => {
      if (!/^[0-9a-f]{7,40}$/.test(id)) return null;
      if (commits.has(id)) return id;
      const commit = tryGit(["rev-parse", "--verify", "--quiet", `${id}^{commit}`])?.trim() || null;
      if (commit) commits.add(commit);
      return commit;
    },
  };
}

export interface GitHttpOptions {
  /** The directory holding `<owner>/<name>.git`. */
  projectRoot: string;
  /** Whether the request's Authorization header is allowed to use the repository (`<owner>/<name>`). */
  authorize: (authorization: string | undefined, repository: string) => boolean;
  /** Fetches answered again from memory until a push through the double changes the repository (see `GitReadCache`). */
  readCache?: GitReadCache;
}

/**
 * Answers to fetches (`info/refs` and `git-upload-pack` for upload-pack), kept per repository and
 * request, and forgotten when a push through the double reaches that repository. For the load
 * bench: each `git http-backend` is a process forked from this one, and on GitHub none of that runs
 * on the machine under test. Only where nothing else writes the served repositories (a test's
 * `repository.git([...])` would not be seen).
 */
export class GitReadCache {
  private readonly answers = new Map<
    string,
    Map<string, { status: number; headers: Record<string, string>; content: Buffer }>
  >();

  get(repository: string, key: string) {
    return this.answers.get(repository.toLowerCase())?.get(key);
  }

  set(
    repository: string,
    key: string,
    answer: { status: number; headers: Record<string, string>; content: Buffer },
  ): void {
    const kept = this.answers.get(repository.toLowerCase()) ?? new Map();
    kept.set(key, answer);
    this.answers.set(repository.toLowerCase(), kept);
  }

  forget(repository: string): void {
    this.answers.delete(repository.toLowerCase());
  }
}

export interface GitHttpExchange {
  service: string;
  status: number;
  authorized: boolean;
}

/** Paths git's smart HTTP protocol uses below a repository. */
export const GIT_PATH = /^\/[^/]+\/[^/]+\.git\/(info\/refs|git-upload-pack|git-receive-pack|HEAD|objects\/.+)$/;

/**
 * One smart-HTTP request, answered by `git http-backend` run as a CGI program, as GitHub's
 * front end would: without the right credentials it answers 401 and git never sees the request.
 */
export async function serveGitRequest(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  body: Buffer,
  options: GitHttpOptions,
): Promise<GitHttpExchange> {
  const url = new URL(req.url ?? "/", "http://double.invalid");
  const service = url.searchParams.get("service") ?? url.pathname.split("/").at(-1) ?? "";
  const repository = /^\/([^/]+\/[^/]+)\.git\//.exec(decodeURIComponent(url.pathname))?.[1] ?? "";
  if (!options.authorize(req.headers.authorization, repository)) {
    res.writeHead(401, { "www-authenticate": 'Basic realm="GitHub"', "content-type": "text/plain" });
    res.end("Authentication failed: an installation token is required (x-access-token).\n");
    return { service, status: 401, authorized: false };
  }
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: os.tmpdir(),
    ...ISOLATED_GIT,
    GIT_PROJECT_ROOT: options.projectRoot,
    GIT_HTTP_EXPORT_ALL: "1",
    GATEWAY_INTERFACE: "CGI/1.1",
    SERVER_PROTOCOL: `HTTP/${req.httpVersion}`,
    REQUEST_METHOD: req.method ?? "GET",
    PATH_INFO: decodeURIComponent(url.pathname),
    QUERY_STRING: url.search.slice(1),
    CONTENT_LENGTH: String(body.length),
    REMOTE_ADDR: req.socket.remoteAddress ?? "127.0.0.1",
    // An authenticated user: http-backend enables receive-pack (push) only then.
    REMOTE_USER: "x-access-token",
  };
  if (req.headers["content-type"]) env.CONTENT_TYPE = req.headers["content-type"];
  if (typeof req.headers["content-encoding"] === "string") env.HTTP_CONTENT_ENCODING = req.headers["content-encoding"];
  if (typeof req.headers["git-protocol"] === "string") env.HTTP_GIT_PROTOCOL = req.headers["git-protocol"];

  const cache = options.readCache;
  const pushes = service === "git-receive-pack";
  // Only fetches are kept, per request; a push makes what was kept stale (forgotten as it starts and once it is done).
  const key =
    cache && service === "git-upload-pack"
      ? `${req.method} ${req.url} ${env.HTTP_GIT_PROTOCOL ?? ""} ${env.CONTENT_TYPE ?? ""} ${env.HTTP_CONTENT_ENCODING ?? ""} ${createHash("sha256").update(body).digest("hex")}`
      : null;
  if (cache && pushes) cache.forget(repository);
  let answer = key ? cache?.get(repository, key) : undefined;
  if (!answer) {
    const output = await runCgi(env, body);
    answer = parseCgiOutput(output.stdout);
    if (answer.status >= 500)
      process.stderr.write(
        `git http-backend failed (${answer.status}) for ${req.method} ${req.url}: ${output.stderr}\n`,
      );
    if (key && answer.status === 200) cache?.set(repository, key, answer);
    if (cache && pushes) cache.forget(repository);
  }
  const { status, headers, content } = answer;
  res.writeHead(status, headers);
  res.end(content);
  return { service, status, authorized: true };
}

function runCgi(env: Record<string, string>, body: Buffer): Promise<{ stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", ["http-backend"], { env, stdio: ["pipe", "pipe", "pipe"] });
    const stdout: Buffer[] = [];
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", () => resolve({ stdout: Buffer.concat(stdout), stderr }));
    child.stdin.on("error", () => undefined);
    child.stdin.end(body);
  });
}

function parseCgiOutput(output: Buffer): { status: number; headers: Record<string, string>; content: Buffer } {
  let end = output.indexOf("\r\n\r\n");
  let separator = 4;
  const lfEnd = output.indexOf("\n\n");
  if (end < 0 || (lfEnd >= 0 && lfEnd < end)) {
    end = lfEnd;
    separator = 2;
  }
  if (end < 0)
    return {
      status: 502,
      headers: { "content-type": "text/plain" },
      content: Buffer.from("git http-backend gave no headers\n"),
    };
  const headers: Record<string, string> = {};
  let status = 200;
  for (const line of output.subarray(0, end).toString("latin1").split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === "status") status = Number.parseInt(value, 10) || 500;
    else headers[name] = value;
  }
  return { status, headers, content: output.subarray(end + separator) };
}
