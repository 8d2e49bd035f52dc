import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRepoConfig } from "../../src/config/repo-config.js";
import { checkBubblewrap, createCommandRunner } from "../../src/workspace/command-runner.js";
import {
  parseEgressEntry,
  parseNetworkCeiling,
  resolveEgressPolicy,
  type NetworkSetting,
} from "../../src/workspace/egress-policy.js";
import { openJobNetwork, type JobNetwork, type JobNetworkOptions } from "../../src/workspace/egress-proxy.js";
import { startLoopbackService, startRegistryDouble, type RegistryDouble } from "../helpers/registry-double.js";

// Real bubblewrap (.ci/run installs it): these tests never skip. No test reaches beyond this machine:
// the registry is a double on 127.0.0.1, and the refused names are refused before any lookup, or are `localhost`.
const check = checkBubblewrap();
const bwrap = "path" in check ? check.path : null;
const runner = createCommandRunner({ bwrapPath: bwrap });

let registry: RegistryDouble;
/** Stands for the App's own port or Redis on the host's loopback. */
let service: Awaited<ReturnType<typeof startLoopbackService>>;
beforeAll(async () => {
  registry = await startRegistryDouble();
  service = await startLoopbackService();
});
afterAll(async () => {
  await registry.close();
  await service.close();
});

const networks: JobNetwork[] = [];
afterAll(async () => {
  for (const network of networks) await network.close();
});

/** The job's network for a repository setting under the operator's BLUEPRINT_NETWORK_ALLOW. */
async function jobNetwork(
  setting: NetworkSetting,
  allowEnv: string,
  options: JobNetworkOptions = {},
): Promise<JobNetwork> {
  const ceiling = parseNetworkCeiling(allowEnv);
  if (!ceiling.ok) throw new Error(ceiling.message);
  const network = await openJobNetwork(resolveEgressPolicy(setting, ceiling.entries).policy, options);
  networks.push(network);
  return network;
}

function settingOf(yaml: string): NetworkSetting {
  const read = parseRepoConfig(yaml);
  if (!read.ok) throw new Error(read.message);
  return read.config.network;
}

function workspace(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "sandbox-net-"));
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "job", version: "1.0.0", private: true }));
  return dir;
}

/** A raw CONNECT through the proxy variable, printing the proxy's status line: no client's own rules in between. */
const connectVia = (target: string) =>
  `(proxy=\${HTTP_PROXY#http://}; exec 3<>/dev/tcp/\${proxy%:*}/\${proxy##*:} && printf 'CONNECT ${target} HTTP/1.1\\r\\nHost: ${target}\\r\\n\\r\\n' >&3 && head -1 <&3) || echo "no proxy"`;
const direct = (port: number) =>
  `(exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3) 2>/dev/null || echo "direct: refused"`;

describe("a sandboxed command's network", () => {
  it("has bubblewrap here (install it: these tests must run)", () => {
    expect(bwrap, "bubblewrap (bwrap) is missing or cannot start here").not.toBeNull();
  });

  it("`network: true` (= registries) with the operator's registry mirror at 127.0.0.1:<port>: npm install works, through the proxy only", async () => {
    expect(settingOf("network: true\n")).toBe("registries");
    const network = await jobNetwork(settingOf("network: true\n"), `registries,127.0.0.1:${registry.port}`);
    const dir = workspace();
    const result = await runner.run(
      [
        `npm install ${registry.packageName} --registry ${registry.url} --no-audit --no-fund --loglevel=error`,
        `node -e "console.log(require('${registry.packageName}'))"`,
        // The mirror's own port, directly, is not there: only the proxy is.
        direct(registry.port),
        direct(service.port),
      ].join("; "),
      { cwd: dir, network },
    );
    expect(result.output).toContain("from the registry double");
    expect(existsSync(path.join(dir, "node_modules", registry.packageName, "index.js"))).toBe(true);
    expect(registry.requests).toContain(`/${registry.packageName}/-/${registry.packageName}-1.0.0.tgz`);
    expect(result.output.match(/direct: refused/g)).toHaveLength(2);
    expect(result.output).not.toContain("secret-service");
    expect(service.connections()).toBe(0);
  });

  it("names the proxy in the usual variables, and never a NO_PROXY or another proxy, whatever the App's environment held", async () => {
    const network = await jobNetwork("registries", "registries");
    const leaky = createCommandRunner({
      bwrapPath: bwrap,
      env: {
        PATH: process.env.PATH,
        NO_PROXY: "127.0.0.1,localhost",
        HTTPS_PROXY: "http://10.0.0.1:3128",
        ALL_PROXY: "socks5://127.0.0.1:1080",
      },
    });
    const result = await leaky.run("env | grep -i -e proxy -e npm_config | sort", { cwd: workspace(), network });
    const bridge = "http://127.0.0.1:3128";
    expect(result.output.trim().split("\n")).toEqual(
      [
        "HTTPS_PROXY",
        "HTTP_PROXY",
        "YARN_HTTPS_PROXY",
        "YARN_HTTP_PROXY",
        "http_proxy",
        "https_proxy",
        "npm_config_https_proxy",
        "npm_config_proxy",
      ]
        .map((name) => `${name}=${bridge}`)
        .sort(),
    );
  });

  it("refuses, and counts per host, what the list does not hold: an unknown name, another loopback address, a name that resolves to 127.0.0.1, the App's port", async () => {
    // The operator allows `localhost` by name, and the repository asks for it: its address still counts.
    const setting = settingOf(`network: { allow: ["127.0.0.1:${registry.port}", localhost] }\n`);
    const network = await jobNetwork(setting, `127.0.0.1:${registry.port},localhost`);
    const result = await runner.run(
      [
        connectVia("example.invalid:443"),
        connectVia("example.invalid:443"),
        connectVia(`127.0.0.2:${service.port}`),
        connectVia(`localhost:${service.port}`),
        connectVia(`127.0.0.1:${service.port}`),
        `curl -sS -o /dev/null -w 'curl %{http_code}\\n' http://example.invalid/ || true`,
        connectVia(`127.0.0.1:${registry.port}`),
      ].join("; "),
      { cwd: workspace(), network },
    );
    const statuses = result.output
      .split("\n")
      .filter((line) => /^HTTP\/1\.1|^curl/.test(line))
      .map((line) => line.trim());
    expect(statuses).toEqual([
      "HTTP/1.1 403 Forbidden",
      "HTTP/1.1 403 Forbidden",
      "HTTP/1.1 403 Forbidden",
      "HTTP/1.1 403 Forbidden",
      "HTTP/1.1 403 Forbidden",
      "curl 403",
      "HTTP/1.1 200 Connection Established",
    ]);
    expect(service.connections()).toBe(0);
    expect(network.refusals()).toEqual([
      { host: "example.invalid", count: 3 },
      { host: "127.0.0.2", count: 1 },
      { host: "localhost", count: 1 },
      // The list allows 127.0.0.1 on one port: the refusal names the port it was asked for.
      { host: `127.0.0.1:${service.port}`, count: 1 },
    ]);
  });

  it("`network: none` (the default): only its own loopback, no proxy variables, nothing outside reachable, not even the operator's mirror", async () => {
    expect(settingOf("")).toBe("none");
    const network = await jobNetwork(settingOf("network: false\n"), `registries,127.0.0.1:${registry.port}`);
    expect(network.state).toEqual({ kind: "offline" });
    const before = registry.requests.length;
    const result = await runner.run(
      [
        "env | grep -ci proxy || true",
        'awk -F: \'NR > 2 { gsub(/ /, "", $1); print "interface " $1 }\' /proc/net/dev',
        direct(registry.port),
        direct(service.port),
        `npm install ${registry.packageName} --registry ${registry.url} --no-audit --no-fund --fetch-retries=0 --loglevel=error >/dev/null 2>&1 || echo "npm: failed"`,
      ].join("; "),
      { cwd: workspace(), network },
    );
    expect(result.output.split("\n")[0]).toBe("0");
    expect(result.output.match(/^interface .*/gm)).toEqual(["interface lo"]);
    expect(result.output.match(/direct: refused/g)).toHaveLength(2);
    expect(result.output).toContain("npm: failed");
    expect(registry.requests.length).toBe(before);
    expect(service.connections()).toBe(0);
    // Without a network at all, the same holds.
    expect((await runner.run(direct(service.port), { cwd: workspace() })).output).toContain("direct: refused");
  });

  it("fails closed when the bridge inside cannot start: the command is not run, and says why", async () => {
    const network = await jobNetwork("registries", `127.0.0.1:${registry.port}`);
    const dir = workspace();
    const broken = createCommandRunner({ bwrapPath: bwrap, nodePath: "/bin/false" });
    const result = await broken.run("touch ran.txt; curl -sS http://example.invalid/", { cwd: dir, network });
    expect(result.exitCode).toBe(125);
    expect(result.output).toContain(
      "Blueprint did not run this command: the network bridge inside the sandbox did not start",
    );
    expect(existsSync(path.join(dir, "ran.txt"))).toBe(false);
    const missing = await createCommandRunner({ bwrapPath: bwrap, nodePath: "/nonexistent/node" }).run(
      "touch ran.txt",
      { cwd: dir, network },
    );
    expect(missing.output).toMatch(/Node binary .* is missing/);
    expect(existsSync(path.join(dir, "ran.txt"))).toBe(false);
  });

  it("without bubblewrap (BLUEPRINT_SANDBOX=none) the proxy variables are still set, pointing at the proxy on the host's loopback (advisory)", async () => {
    const entry = parseEgressEntry(`127.0.0.1:${registry.port}`);
    if (!entry.ok) throw new Error(entry.message);
    const network = await jobNetwork({ allow: [entry.entry] }, `127.0.0.1:${registry.port}`, { tcp: true });
    if (network.state.kind !== "proxy" || network.state.tcpPort === null) throw new Error("expected a TCP proxy");
    const result = await createCommandRunner().run(`echo "proxy=$HTTPS_PROXY"; ${connectVia("example.invalid:443")}`, {
      cwd: workspace(),
      network,
    });
    expect(result.output).toContain(`proxy=http://127.0.0.1:${network.state.tcpPort}`);
    expect(result.output).toContain("HTTP/1.1 403 Forbidden");
    expect(network.refusals()).toEqual([{ host: "example.invalid", count: 1 }]);
  });
});

describe("other jobs' proxies", () => {
  it("a job's commands neither list nor reach another job's socket directory, though the socket root lies where sandboxes look (/opt)", async () => {
    const { mkdirSync, readdirSync, rmSync } = await import("node:fs");
    mkdirSync("/opt", { recursive: true });
    const root = mkdtempSync("/opt/blueprint-egress-tenants-");
    const a = await jobNetwork("registries", "registries", { socketRoot: root });
    const b = await jobNetwork("registries", "registries", { socketRoot: root });
    const theirs = b.state.kind === "proxy" ? path.dirname(b.state.socketPath) : "";
    expect(readdirSync(root).sort()).toEqual(
      [path.basename(path.dirname(a.state.kind === "proxy" ? a.state.socketPath : "")), path.basename(theirs)].sort(),
    );
    const result = await runner.run(
      `echo "root: $(ls -A ${root} 2>/dev/null | tr '\\n' ' ')"; test -e ${theirs}/proxy.sock && echo "B's socket: there" || echo "B's socket: not there"`,
      { cwd: workspace(), network: a },
    );
    expect(result.output).toContain("root: \n");
    expect(result.output).toContain("B's socket: not there");
    rmSync(root, { recursive: true, force: true });
  });
});
