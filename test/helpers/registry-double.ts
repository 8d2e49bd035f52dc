import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { tempDir } from "./git-repo.js";

/** An npm registry on 127.0.0.1 serving one tiny package (packument and tarball), and a plain server standing for the App's own port. */
export interface RegistryDouble extends PackageRegistry {
  packageName: string;
}

export async function startRegistryDouble(packageName = "blueprint-tiny-pkg"): Promise<RegistryDouble> {
  const registry = await startPackageRegistry([{ name: packageName, version: "1.0.0", files: { "index.js": "module.exports = 'from the registry double';\n" } }]);
  return { ...registry, packageName };
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
  close(): Promise<void>;
}

/**
 * An npm registry on 127.0.0.1 serving the given versions as npm does: `/<name>` is the packument
 * (every version with its dist.tarball, dist.shasum and dist.integrity), `/<name>/-/<name>-<version>.tgz`
 * the tarball, packed here from the files given; anything else is a 404.
 */
export async function startPackageRegistry(published: PublishedVersion[]): Promise<PackageRegistry> {
  const tarballs = new Map(published.map((entry) => [`/${entry.name}/-/${entry.name.split("/").pop() ?? entry.name}-${entry.version}.tgz`, { entry, bytes: packTarball(entry) }]));
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
      const bytes = tampered.has(`${tarball.entry.name}@${tarball.entry.version}`) ? Buffer.concat([tarball.bytes, Buffer.from([0])]) : tarball.bytes;
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
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
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

/** A TCP server that answers every connection with a line: the App's port or Redis, as a command must never reach it. */
export async function startLoopbackService(reply = "secret-service\n"): Promise<{ port: number; connections: () => number; close(): Promise<void> }> {
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
