import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { tempDir } from "./git-repo.js";

/**
 * An npm registry on 127.0.0.1 serving one tiny package (packument and tarball), and a plain server standing for the
 * App's own port.
 */
export interface RegistryDouble extends PackageRegistry {
  packageName: string;
  /** The package's tarball, and its integrity as a package-lock.json records it. */
  tarballUrl: string;
  integrity: string;
}

export async function startRegistryDouble(packageName = "blueprint-tiny-pkg"): Promise<RegistryDouble> {
  const registry = await startPackageRegistry([
    { name: packageName, version: "1.0.0", files: { "index.js": "module.exports = 'from the registry double';\n" } },
  ]);
  const { tarball, integrity } = registry.dist(packageName, "1.0.0");
  return { ...registry, packageName, tarballUrl: tarball, integrity };
}

/** One published version: its files (package.json is added when not given). */
export interface PublishedVersion {
  name: string;
  version: string;
  files: Record<string, string>;
}

export interface PackageRegistry {
  port: number;
  /** `http://127.0.0.1:<port>/` */
  url: string;
  /** Paths requested, in order. */
  requests: string[];
  /** `name@version`s whose tarball is served with a byte changed, under the packument's unchanged dist.integrity. */
  tampered: Set<string>;
  /** A published version's tarball URL and integrity, as its packument gives them. */
  dist(name: string, version: string): { tarball: string; integrity: string };
  close(): Promise<void>;
}

/**
 * An npm registry on 127.0.0.1 serving the given versions as npm does: `/<name>` is the packument
 * (every version with its dist.tarball, dist.shasum and dist.integrity), `/<name>/-/<name>-<version>.tgz`
 * the tarball, packed here from the files given; anything else is a 404.
 */
export async function startPackageRegistry(published: PublishedVersion[]): Promise<PackageRegistry> {
  const tarballs = new Map(
    published.map((entry) => [
      `/${entry.name}/-/${entry.name.split("/").pop() ?? entry.name}-${entry.version}.tgz`,
      { entry, bytes: packTarball(entry) },
    ]),
  );
  const requests: string[] = [];
  const tampered = new Set<string>();
  let port = 0;
  const server = http.createServer((request, response) => {
    const url = request.url ?? "";
    requests.push(url);
    const name = decodeURIComponent(url.slice(1));
    const tarball = tarballs.get(url);
    const versions = [...tarballs].filter(([, { entry }]) => entry.name === name);
    if (versions.length > 0) {
      const packument = {
        name,
        "dist-tags": { latest: versions.at(-1)?.[1].entry.version },
        versions: Object.fromEntries(
          versions.map(([tarballPath, { entry, bytes }]) => [
            entry.version,
            {
              name,
              version: entry.version,
              dist: {
                tarball: `http://127.0.0.1:${port}${tarballPath}`,
                shasum: createHash("sha1").update(bytes).digest("hex"),
                integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`,
              },
            },
          ]),
        ),
      };
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(packument));
    } else if (tarball) {
      const bytes = tampered.has(`${tarball.entry.name}@${tarball.entry.version}`)
        ? Buffer.concat([tarball.bytes, Buffer.from([0])])
        : tarball.bytes;
      response.writeHead(200, { "content-type": "application/octet-stream" }).end(bytes);
    } else {
      response.writeHead(404).end("{}");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as net.AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}/`,
    requests,
    tampered,
    dist(name, version) {
      const found = [...tarballs].find(([, { entry }]) => entry.name === name && entry.version === version);
      if (!found) throw new Error(`the registry double does not publish ${name}@${version}`);
      return {
        tarball: `http://127.0.0.1:${port}${found[0]}`,
        integrity: `sha512-${createHash("sha512").update(found[1].bytes).digest("base64")}`,
      };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A project depending on the double's package: package.json (with `scripts.test`), a package-lock.json
 * resolving it to the double (without the dependency when `locked` is false, so that `npm ci` refuses
 * the two as out of sync), and an .npmrc naming the double as the registry.
 */
export function npmProjectFiles(registry: RegistryDouble, locked = true): Record<string, string> {
  const dependencies = { [registry.packageName]: "1.0.0" };
  const manifest = { name: "job", version: "1.0.0", private: true, scripts: { test: "node --test" }, dependencies };
  const resolved = {
    [`node_modules/${registry.packageName}`]: {
      version: "1.0.0",
      resolved: registry.tarballUrl,
      integrity: registry.integrity,
    },
  };
  const lock = {
    name: "job",
    version: "1.0.0",
    lockfileVersion: 3,
    requires: true,
    packages: {
      "": { name: "job", version: "1.0.0", ...(locked ? { dependencies } : {}) },
      ...(locked ? resolved : {}),
    },
  };
  return {
    "package.json": JSON.stringify(manifest, null, 2),
    "package-lock.json": JSON.stringify(lock, null, 2),
    ".npmrc": `registry=${registry.url}\n`,
  };
}

/** A PyPI "simple" index (PEP 503) on 127.0.0.1 serving one tiny pure-Python wheel. */
export interface PypiDouble {
  /** `http://127.0.0.1:<port>/simple/`, for pip's `--index-url`. */
  indexUrl: string;
  port: number;
  /** The distribution's name (`blueprint-tiny-py`); its module is `blueprint_tiny_py`. */
  project: string;
  requests: string[];
  close(): Promise<void>;
}

export async function startPypiDouble(): Promise<PypiDouble> {
  const project = "blueprint-tiny-py";
  const wheelName = "blueprint_tiny_py-1.0.0-py3-none-any.whl";
  const wheel = buildWheel(wheelName);
  const digest = createHash("sha256").update(wheel).digest("hex");
  const requests: string[] = [];
  const server = http.createServer((request, response) => {
    const url = request.url ?? "";
    requests.push(url);
    if (url === `/simple/${project}/` || url === `/simple/${project}`) {
      response
        .writeHead(200, { "content-type": "text/html" })
        .end(
          `<!DOCTYPE html><html><body><a href="/files/${wheelName}#sha256=${digest}">${wheelName}</a></body></html>\n`,
        );
    } else if (url === `/files/${wheelName}`) {
      response.writeHead(200, { "content-type": "application/octet-stream" }).end(wheel);
    } else {
      response.writeHead(404, { "content-type": "text/html" }).end("<html><body>not here</body></html>\n");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    indexUrl: `http://127.0.0.1:${port}/simple/`,
    port,
    project,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * A wheel as a build backend makes it: the module and its .dist-info (METADATA, WHEEL, RECORD), zipped by Python's
 * zipfile.
 */
function buildWheel(fileName: string): Buffer {
  const out = path.join(tempDir("pypi-double-"), fileName);
  const script = [
    "import sys, zipfile",
    "m, d = 'blueprint_tiny_py', 'blueprint_tiny_py-1.0.0.dist-info'",
    "files = {m + '/__init__.py': \"GREETING = 'from the pypi double'\\n\",",
    "  d + '/METADATA': 'Metadata-Version: 2.1\\nName: blueprint-tiny-py\\nVersion: 1.0.0\\n',",
    "  d + '/WHEEL': 'Wheel-Version: 1.0\\nGenerator: blueprint-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n'}",
    "files[d + '/RECORD'] = ''.join(name + ',,\\n' for name in list(files) + [d + '/RECORD'])",
    "with zipfile.ZipFile(sys.argv[1], 'w') as z:",
    "  for name, text in files.items(): z.writestr(name, text)",
  ].join("\n");
  execFileSync("python3", ["-c", script, out]);
  return readFileSync(out);
}

/** A package tarball as `npm pack` makes it: the files under package/, gzipped. */
function packTarball({ name, version, files }: PublishedVersion): Buffer {
  const root = tempDir("registry-double-");
  const all = { "package.json": JSON.stringify({ name, version, main: "index.js" }), ...files };
  for (const [file, text] of Object.entries(all)) {
    mkdirSync(path.dirname(path.join(root, "package", file)), { recursive: true });
    writeFileSync(path.join(root, "package", file), text);
  }
  execFileSync("tar", ["czf", "pkg.tgz", "package"], { cwd: root });
  const bytes = readFileSync(path.join(root, "pkg.tgz"));
  rmSync(root, { recursive: true, force: true });
  return bytes;
}

/**
 * A TCP server that answers every connection with a line: the App's port or Redis, as a command must never reach it.
 */
export async function startLoopbackService(
  reply = "secret-service\n",
): Promise<{ port: number; connections: () => number; close(): Promise<void> }> {
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.end(reply);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
