import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createCommandRunner } from "../../src/workspace/command-runner.js";
import {
  parseEgressEntry,
  parseNetworkCeiling,
  resolveEgressPolicy,
  type EgressPolicy,
  type NetworkSetting,
} from "../../src/workspace/egress-policy.js";
import { openJobNetwork, type JobNetwork, type JobNetworkOptions } from "../../src/workspace/egress-proxy.js";
import { tempDir } from "../helpers/git-repo.js";
import { startLoopbackService, startRegistryDouble } from "../helpers/registry-double.js";

/**
 * The proxy on its own, spoken to over its Unix socket as the sandbox bridge would (the sandboxed path is in
 * sandbox-network.test.ts).
 */

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function policyFor(setting: NetworkSetting, ceilingText: string): EgressPolicy {
  const ceiling = parseNetworkCeiling(ceilingText);
  if (!ceiling.ok) throw new Error(ceiling.message);
  return resolveEgressPolicy(setting, ceiling.entries).policy;
}
const allow = (...texts: string[]): NetworkSetting => ({
  allow: texts.map((text) => {
    const parsed = parseEgressEntry(text);
    if (!parsed.ok) throw new Error(parsed.message);
    return parsed.entry;
  }),
});

async function open(policy: EgressPolicy, options: JobNetworkOptions = {}): Promise<JobNetwork> {
  const network = await openJobNetwork(policy, options);
  cleanups.push(() => network.close());
  return network;
}

function socketOf(network: JobNetwork): string {
  if (network.state.kind !== "proxy") throw new Error(`no proxy: ${JSON.stringify(network.state)}`);
  return network.state.socketPath;
}

/** Sends `CONNECT target` and, once tunnelled, `then`; resolves with everything the proxy sent back. */
function connectThrough(socketPath: string, target: string, then = ""): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath);
    let received = "";
    socket.on("connect", () => socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
    socket.on("data", (chunk) => {
      received += chunk.toString();
      if (then && received.startsWith("HTTP/1.1 200") && received.endsWith("\r\n\r\n")) socket.write(then);
    });
    socket.on("end", () => resolve(received));
    socket.on("error", reject);
  });
}

describe("the egress proxy", () => {
  it("tunnels CONNECT and forwards absolute-form HTTP to an address the operator named, over the job's own 0700 socket", async () => {
    const registry = await startRegistryDouble();
    cleanups.push(() => registry.close());
    const network = await open(policyFor("registries", `registries,127.0.0.1:${registry.port}`));
    const socketPath = socketOf(network);
    expect(existsSync(socketPath)).toBe(true);
    expect(statSync(path.dirname(socketPath)).mode & 0o777).toBe(0o700);

    const tunnelled = await connectThrough(
      socketPath,
      `127.0.0.1:${registry.port}`,
      `GET /${registry.packageName} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    );
    expect(tunnelled).toMatch(/^HTTP\/1\.1 200 Connection Established\r\n\r\nHTTP\/1\.1 200 OK/);
    expect(tunnelled).toContain('"dist-tags"');

    const forwarded = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      http
        .get(
          {
            socketPath,
            path: `http://127.0.0.1:${registry.port}/${registry.packageName}`,
            headers: { "proxy-connection": "keep-alive" },
          },
          (response) => {
            let body = "";
            response.on("data", (chunk) => (body += String(chunk)));
            response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
          },
        )
        .on("error", reject);
    });
    expect(forwarded.status).toBe(200);
    expect(forwarded.body).toContain(registry.packageName);
    expect(registry.requests).toEqual([`/${registry.packageName}`, `/${registry.packageName}`]);
    expect(network.refusals()).toEqual([]);

    await network.close();
    expect(existsSync(path.dirname(socketPath))).toBe(false);
  });

  it("refuses hosts off the list before resolving them, and counts refusals per host", async () => {
    const lookups: string[] = [];
    const network = await open(policyFor(allow("allowed.test"), "allowed.test"), {
      lookup: async (host) => (lookups.push(host), ["93.184.216.34"]),
    });
    const socketPath = socketOf(network);
    for (let i = 0; i < 3; i += 1)
      expect(await connectThrough(socketPath, "example.invalid:443")).toMatch(
        /^HTTP\/1\.1 403 Forbidden[\s\S]*not on this job's network allow-list/,
      );
    expect(await connectThrough(socketPath, "allowed.test.evil.invalid:443")).toMatch(/^HTTP\/1\.1 403/);
    expect(await connectThrough(socketPath, "127.0.0.2:80")).toMatch(/^HTTP\/1\.1 403/);
    // Whatever else a command sends is counted, but never named as it was sent (it would land in the report).
    expect(await connectThrough(socketPath, "**evil**.invalid:443")).toMatch(/^HTTP\/1\.1 400/);
    expect(lookups).toEqual([]);
    expect(network.refusals()).toEqual([
      { host: "example.invalid", count: 3 },
      { host: "allowed.test.evil.invalid", count: 1 },
      { host: "127.0.0.2", count: 1 },
      { host: "(malformed host)", count: 1 },
    ]);
    // Past 30 hosts, the rest are counted together.
    for (let i = 0; i < 40; i += 1) await connectThrough(socketPath, `h${i}.invalid:443`);
    const refusals = network.refusals();
    expect(refusals).toHaveLength(31);
    expect(refusals.at(-1)).toEqual({ host: "(other hosts)", count: 14 });
  });

  it("names the port of a refusal where the allow-list allows that host on some ports only", async () => {
    const service = await startLoopbackService();
    cleanups.push(() => service.close());
    const network = await open(
      policyFor(
        allow(`127.0.0.1:${service.port}`, "[::1]:8080", "api.test:8443", "*.ports.test:443"),
        `127.0.0.1:${service.port},[::1]:8080,api.test:8443,*.ports.test:443`,
      ),
      { lookup: async () => ["93.184.216.34"] },
    );
    const socketPath = socketOf(network);
    const other = service.port === 65535 ? service.port - 1 : service.port + 1;
    for (const target of [
      `127.0.0.1:${other}`,
      "[::1]:8081",
      "api.test:443",
      "a.ports.test:80",
      "elsewhere.invalid:443",
    ])
      expect(await connectThrough(socketPath, target)).toMatch(/^HTTP\/1\.1 403/);
    expect(network.refusals()).toEqual([
      { host: `127.0.0.1:${other}`, count: 1 },
      { host: "[::1]:8081", count: 1 },
      { host: "api.test:443", count: 1 },
      { host: "a.ports.test:80", count: 1 },
      // A host the list does not name at all is refused on every port: its name is enough.
      { host: "elsewhere.invalid", count: 1 },
    ]);
  });

  it("checks every address a name resolves to: one loopback, link-local or private address is enough to refuse it", async () => {
    const service = await startLoopbackService();
    cleanups.push(() => service.close());
    const answers: Record<string, string[]> = {
      "mixed.test": ["93.184.216.34", "127.0.0.1"],
      "metadata.test": ["169.254.169.254"],
      "mapped.test": ["::ffff:10.0.0.1"],
    };
    const network = await open(policyFor(allow("*.test"), "*.test"), { lookup: async (host) => answers[host] ?? [] });
    const socketPath = socketOf(network);
    expect(await connectThrough(socketPath, `mixed.test:${service.port}`)).toMatch(
      /^HTTP\/1\.1 403[\s\S]*resolves to 127\.0\.0\.1, a loopback address/,
    );
    expect(await connectThrough(socketPath, "metadata.test:80")).toMatch(
      /resolves to 169\.254\.169\.254, a link-local address/,
    );
    expect(await connectThrough(socketPath, "mapped.test:443")).toMatch(
      /resolves to ::ffff:10\.0\.0\.1, a private address/,
    );
    expect(service.connections()).toBe(0);
    expect(network.refusals().map((refusal) => refusal.host)).toEqual(["mixed.test", "metadata.test", "mapped.test"]);
  });

  it("refuses a name that really resolves to 127.0.0.1 (localhost), even when the name is on the list", async () => {
    const service = await startLoopbackService();
    cleanups.push(() => service.close());
    const network = await open(policyFor(allow("localhost"), "localhost"));
    expect(await connectThrough(socketOf(network), `localhost:${service.port}`)).toMatch(
      /^HTTP\/1\.1 403[\s\S]*a loopback address/,
    );
    expect(service.connections()).toBe(0);
    expect(network.refusals()).toEqual([{ host: "localhost", count: 1 }]);
  });

  it("connects to the address it checked, never resolving the name again", async () => {
    const registry = await startRegistryDouble();
    cleanups.push(() => registry.close());
    const lookups: string[] = [];
    // `mirror.test` resolves nowhere but in this lookup: a second resolution by anyone else would fail.
    const network = await open(policyFor(allow("mirror.test"), `mirror.test,127.0.0.1:${registry.port}`), {
      lookup: async (host) => (lookups.push(host), ["127.0.0.1"]),
    });
    const reply = await connectThrough(
      socketOf(network),
      `mirror.test:${registry.port}`,
      `GET /${registry.packageName} HTTP/1.1\r\nHost: mirror.test\r\nConnection: close\r\n\r\n`,
    );
    expect(reply).toContain("HTTP/1.1 200 OK");
    expect(lookups).toEqual(["mirror.test"]);
    // The operator's exception is that exact address:port: another port of the same address is refused.
    expect(await connectThrough(socketOf(network), `mirror.test:${registry.port + 1}`)).toMatch(/^HTTP\/1\.1 403/);
  });

  it("runs no proxy for a policy that allows nothing", async () => {
    const network = await open(policyFor("none", "registries"));
    expect(network.state).toEqual({ kind: "offline" });
  });
});

describe("fail closed", () => {
  it("refuses a socket path over a Unix socket's 107 bytes, which Node would bind cut short, with the reason", async () => {
    const deep = path.join(tempDir("egress-deep-"), "d".repeat(80));
    mkdirSync(deep);
    const network = await open(policyFor("registries", "registries"), { socketRoot: deep });
    expect(network.state).toEqual({
      kind: "failed",
      problem: expect.stringMatching(/could not start \(its socket's path is over 107 bytes, a Unix socket's limit: /),
    });
  });

  it("keeps its sockets in /tmp when the temporary directory's path is too long to hold one", () => {
    const deep = path.join(tempDir("egress-deep-"), "d".repeat(80));
    mkdirSync(deep);
    const script = `
      const { openJobNetwork } = await import(${JSON.stringify(new URL("../../src/workspace/egress-proxy.ts", import.meta.url).href)});
      const network = await openJobNetwork({ allow: [{ host: "example.com", port: 443 }] });
      console.log(JSON.stringify(network.state));
      await network.close();`;
    const output = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      env: { ...process.env, TMPDIR: deep },
      encoding: "utf8",
    });
    const state = JSON.parse(output) as { kind: string; socketPath: string };
    expect(state.kind).toBe("proxy");
    expect(state.socketPath).toMatch(/^\/tmp\/blueprint-egress-root-\w+\/blueprint-egress-\w+\/proxy\.sock$/);
    rmSync(path.dirname(path.dirname(state.socketPath)), { recursive: true, force: true });
  });

  it("a proxy that cannot start gives a failed network, and commands are not run, with a message that says why", async () => {
    const network = await open(policyFor("registries", "registries"), { socketRoot: "/nonexistent/blueprint" });
    expect(network.state).toEqual({
      kind: "failed",
      problem: expect.stringMatching(/^Blueprint's network proxy could not start \(.*ENOENT/),
    });
    const workspace = tempDir("egress-failed-");
    const result = await createCommandRunner().run("touch ran.txt", { cwd: workspace, network });
    expect(existsSync(path.join(workspace, "ran.txt"))).toBe(false);
    expect(result.exitCode).toBe(125);
    expect(result.output).toMatch(
      /Blueprint did not run this command: Blueprint's network proxy could not start .*never fall back to the host's network/,
    );
  });
});
