import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Where published packages come from and where they are kept. */
export interface NpmSource {
  /**
   * The registry's base URL (npm's `--registry`); unset: the one npm is configured with (`npm config get registry`).
   */
  registry?: string | undefined;
  /** Tarballs and their unpacked trees live under `<cacheDir>/npm/`. */
  cacheDir: string;
}

/** `$XDG_CACHE_HOME/blueprint-eval`, else `~/.cache/blueprint-eval` (the real suite's clones are kept there too). */
export function defaultEvalCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "blueprint-eval");
}

const NPM_REGISTRY = "https://registry.npmjs.org/";
const FETCH_TIMEOUT_MS = 60_000;
/** Strongest first, as npm (ssri) picks the hash it checks. */
const ALGORITHMS = ["sha512", "sha384", "sha256", "sha1"] as const;

interface VersionDist {
  tarball?: string;
  integrity?: string;
  shasum?: string;
}

/**
 * `name@version` as published, unpacked: a folder under the cache. The first time, the tarball is read
 * from the registry and kept only if it matches the `dist.integrity` the registry gives for that version
 * (its strongest hash, as npm checks it); after that, the cached tarball is checked against the integrity
 * recorded with it and no request is made. A tarball that no longer matches is fetched again.
 */
export function fetchPackage(name: string, version: string, source: NpmSource): Promise<string> {
  // Two tasks may share a version (one's later is another's earlier): one fetch serves both.
  const key = JSON.stringify([source.cacheDir, source.registry, name, version]);
  let fetching = inFlight.get(key);
  if (!fetching) {
    fetching = fetchOnce(name, version, source).finally(() => inFlight.delete(key));
    inFlight.set(key, fetching);
  }
  return fetching;
}

const inFlight = new Map<string, Promise<string>>();

async function fetchOnce(name: string, version: string, source: NpmSource): Promise<string> {
  const base = path.join(source.cacheDir, "npm", name.replace("/", "+"), version);
  const tarball = `${base}.tgz`;
  const record = `${base}.integrity`;
  const cached =
    existsSync(tarball) && existsSync(record) && matches(readFileSync(tarball), readFileSync(record, "utf8").trim());
  if (!cached) {
    // A damaged entry goes, with the tree unpacked from it.
    if (existsSync(tarball) || existsSync(record)) rmSync(base, { recursive: true, force: true });
    const { bytes, integrity } = await download(name, version, source.registry ?? (await configuredRegistry()));
    mkdirSync(path.dirname(base), { recursive: true });
    writeAtomic(tarball, bytes);
    writeAtomic(record, `${integrity}\n`);
  }
  if (!existsSync(base)) await unpack(tarball, base);
  return base;
}

let configured: Promise<string> | null = null;

/** npm's configured registry (.npmrc, npm_config_registry), asked once per process. */
function configuredRegistry(): Promise<string> {
  configured ??= run("npm", ["config", "get", "registry"], { timeout: 30_000 }).then(
    (result) => (/^https?:\/\//.test(result.stdout.trim()) ? result.stdout.trim() : NPM_REGISTRY),
    () => NPM_REGISTRY,
  );
  return configured;
}

async function download(
  name: string,
  version: string,
  registry: string,
): Promise<{ bytes: Buffer; integrity: string }> {
  const spec = `${name}@${version}`;
  const packumentUrl = new URL(name.replace("/", "%2f"), registry.endsWith("/") ? registry : `${registry}/`).href;
  const packument = await get(packumentUrl, spec, {
    accept: "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*",
  });
  if (packument.status === 404) throw new Error(`${spec}: the registry ${registry} has no package ${name}`);
  const versions =
    (JSON.parse(packument.body.toString("utf8")) as { versions?: Record<string, { dist?: VersionDist }> }).versions ??
    {};
  const dist = versions[version]?.dist;
  if (!dist) {
    const known = Object.keys(versions);
    throw new Error(
      `${spec}: the registry ${registry} has no version ${version} of ${name} (it has ${known.length === 0 ? "none" : known.slice(-8).join(", ")})`,
    );
  }
  const expected =
    dist.integrity ?? (dist.shasum ? `sha1-${Buffer.from(dist.shasum, "hex").toString("base64")}` : undefined);
  if (!expected || !dist.tarball)
    throw new Error(
      `${spec}: the registry ${registry} gives no ${dist.tarball ? "integrity" : "tarball"} for it, so it cannot be checked; refused`,
    );
  const tarball = await get(dist.tarball, spec);
  if (tarball.status !== 200) throw new Error(`${spec}: ${dist.tarball} answered ${tarball.status}`);
  if (!matches(tarball.body, expected)) {
    throw new Error(
      `${spec}: the tarball from ${dist.tarball} does not match the registry's dist.integrity (expected ${strongest(expected)?.digest ?? expected}, got ${hashOf(tarball.body, strongest(expected)?.algorithm ?? "sha512")}); refused, nothing was cached`,
    );
  }
  return { bytes: tarball.body, integrity: expected };
}

async function get(
  url: string,
  spec: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Buffer }> {
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { "user-agent": "blueprint-eval", ...headers },
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
    throw new Error(
      `${spec}: could not reach ${url} (${error instanceof Error ? error.message : String(error)}${cause})`,
    );
  }
  if (response.status !== 200 && response.status !== 404)
    throw new Error(`${spec}: ${url} answered ${response.status} ${response.statusText}`);
  return { status: response.status, body: Buffer.from(await response.arrayBuffer()) };
}

/** The strongest hash of a Subresource Integrity string (`sha512-… sha1-…`). */
function strongest(integrity: string): { algorithm: string; digest: string } | undefined {
  const hashes = integrity.split(/\s+/).map((entry) => ({
    algorithm: entry.slice(0, entry.indexOf("-")),
    digest: entry.slice(entry.indexOf("-") + 1).split("?")[0] ?? "",
  }));
  for (const algorithm of ALGORITHMS) {
    const found = hashes.find((hash) => hash.algorithm === algorithm);
    if (found) return { algorithm, digest: `${algorithm}-${found.digest}` };
  }
  return undefined;
}

function hashOf(bytes: Buffer, algorithm: string): string {
  return `${algorithm}-${createHash(algorithm).update(bytes).digest("base64")}`;
}

function matches(bytes: Buffer, integrity: string): boolean {
  const hash = strongest(integrity);
  return hash !== undefined && hashOf(bytes, hash.algorithm) === hash.digest;
}

function writeAtomic(file: string, content: Buffer | string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, content);
  renameSync(temporary, file);
}

/**
 * The tarball's files under `dir`, its top folder (`package/` as a rule) stripped as npm does. Written
 * to a folder beside `dir` first, so an interrupted unpack leaves nothing half done.
 */
async function unpack(tarball: string, dir: string): Promise<void> {
  const temporary = mkdtempSync(`${dir}.unpacking-`);
  try {
    await run("tar", ["-xzf", tarball, "-C", temporary, "--strip-components=1", "--no-same-owner"]);
    normaliseModes(temporary);
    renameSync(temporary, dir);
  } catch (error) {
    rmSync(temporary, { recursive: true, force: true });
    if (existsSync(dir)) return;
    throw new Error(`could not unpack ${tarball}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * As npm unpacks: folders 755, files 644 (755 if executable), since old tarballs carry odd modes
 * (folders without x, read-only files); links are dropped.
 */
function normaliseModes(dir: string): void {
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) normaliseModes(full);
    else if (entry.isFile()) chmodSync(full, statSync(full).mode & 0o111 ? 0o755 : 0o644);
    else rmSync(full, { force: true });
  }
}
