import { describe, expect, it } from "vitest";
import {
  allowsTarget,
  forbiddenAddress,
  formatEgressEntry,
  isExempt,
  parseEgressEntry,
  parseNetworkCeiling,
  REGISTRY_HOSTS,
  resolveEgressPolicy,
  type EgressEntry,
} from "../../src/workspace/egress-policy.js";

const entry = (text: string): EgressEntry => {
  const parsed = parseEgressEntry(text);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.entry;
};
const ceiling = (text: string): EgressEntry[] => {
  const parsed = parseNetworkCeiling(text);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.entries;
};
const names = (entries: EgressEntry[]) => entries.map(formatEgressEntry);

describe("allow-list entries", () => {
  it("reads host, host:port, *.suffix and address:port (IPv4 and bracketed IPv6), case and final dot ignored", () => {
    expect(entry("Registry.NPMJS.org.")).toEqual({ kind: "host", host: "registry.npmjs.org", port: null });
    expect(entry("github.com:443")).toEqual({ kind: "host", host: "github.com", port: 443 });
    expect(entry("*.example.com")).toEqual({ kind: "suffix", suffix: "example.com", port: null });
    expect(entry("*.example.com:8443")).toEqual({ kind: "suffix", suffix: "example.com", port: 8443 });
    expect(entry("10.0.0.5:8080")).toEqual({ kind: "address", address: "10.0.0.5", port: 8080 });
    expect(entry("[0:0::1]:4873")).toEqual({ kind: "address", address: "::1", port: 4873 });
    expect(names([entry("[FD00::5]:80"), entry("*.Example.com:1")])).toEqual(["[fd00::5]:80", "*.example.com:1"]);
  });

  it.each([
    ["10.0.0.5", /address without a port/],
    ["::1", /address without a port/],
    ["[::1]", /address without a port/],
    ["host:0", /port that is not a number from 1 to 65535/],
    ["host:65536", /port that is not a number/],
    ["host:http", /port that is not a number/],
    ["*.exa mple.com", /followed by a domain/],
    ["*", /not a host name/],
    ["foo bar", /not a host name/],
    ["http://example.com", /not a host name|port/],
    ["[example.com]:80", /not an IPv6 address/],
    ["", /is empty/],
  ])("refuses %j with a plain reason", (text, reason) => {
    const parsed = parseEgressEntry(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message).toMatch(reason);
  });
});

describe("BLUEPRINT_NETWORK_ALLOW, the operator's ceiling", () => {
  it("defaults to the built-in registries, HTTPS only; `registries` and `none` are words in the list", () => {
    expect(names(ceiling(""))).toEqual(REGISTRY_HOSTS.map((host) => `${host}:443`));
    expect(parseNetworkCeiling(undefined)).toEqual({ ok: true, entries: ceiling("registries") });
    expect(ceiling("none")).toEqual([]);
    expect(names(ceiling("registries, 127.0.0.1:4873"))).toEqual([
      ...REGISTRY_HOSTS.map((host) => `${host}:443`),
      "127.0.0.1:4873",
    ]);
  });

  it("names every bad entry", () => {
    expect(parseNetworkCeiling("ok.example, bad host, 10.0.0.1")).toEqual({
      ok: false,
      message: expect.stringMatching(/`bad host`.*; `10\.0\.0\.1` is an address without a port/),
    });
  });
});

describe("the job's policy: the repository's setting held under the ceiling", () => {
  it("`none` allows nothing; `registries` is the built-in list as far as the ceiling goes, plus the operator's explicit addresses", () => {
    const limit = ceiling("registry.npmjs.org, pypi.org:443, github.com, 127.0.0.1:4873");
    expect(resolveEgressPolicy("none", limit).policy.allow).toEqual([]);
    const registries = resolveEgressPolicy("registries", limit);
    expect(names(registries.policy.allow)).toEqual(["registry.npmjs.org:443", "pypi.org:443", "127.0.0.1:4873"]);
    expect(registries.dropped).toEqual([]);
    expect(registries.policy.exempt).toEqual([{ address: "127.0.0.1", port: 4873 }]);
    expect(resolveEgressPolicy("registries", ceiling("none")).policy.allow).toEqual([]);
  });

  it("an allow list keeps what the ceiling covers, narrowed to it, and drops the rest", () => {
    const limit = ceiling("*.example.com, github.com:443, api.test, 10.0.0.5:8080");
    const { policy, dropped } = resolveEgressPolicy(
      {
        allow: [
          "a.example.com",
          "*.b.example.com",
          "*.example.com:8443",
          "example.com",
          "github.com",
          "github.com:22",
          "api.test:9000",
          "10.0.0.5:8080",
          "10.0.0.5:9090",
          "evil.test",
        ].map(entry),
      },
      limit,
    );
    expect(names(policy.allow)).toEqual([
      "a.example.com",
      "*.b.example.com",
      "*.example.com:8443",
      "github.com:443",
      "api.test:9000",
      "10.0.0.5:8080",
    ]);
    expect(names(dropped)).toEqual(["example.com", "github.com:22", "10.0.0.5:9090", "evil.test"]);
  });

  it("a repository names a loopback or private address only where the operator's list holds that exact address:port", () => {
    const { policy, dropped } = resolveEgressPolicy(
      { allow: [entry("127.0.0.1:6379"), entry("169.254.169.254:80")] },
      ceiling("registries"),
    );
    expect(policy.allow).toEqual([]);
    expect(names(dropped)).toEqual(["127.0.0.1:6379", "169.254.169.254:80"]);
    // A wide name in the ceiling does not cover an address.
    expect(resolveEgressPolicy({ allow: [entry("10.0.0.5:80")] }, ceiling("*.example.com")).policy.allow).toEqual([]);
  });

  it("matches a destination by name, suffix and port; an address literal only by an address entry", () => {
    const { policy } = resolveEgressPolicy(
      { allow: ["registry.npmjs.org:443", "*.example.com", "[::1]:4873"].map(entry) },
      ceiling("registry.npmjs.org, *.example.com, [::1]:4873"),
    );
    expect(allowsTarget(policy, "registry.npmjs.org", 443)).toBe(true);
    expect(allowsTarget(policy, "registry.npmjs.org", 80)).toBe(false);
    expect(allowsTarget(policy, "deep.sub.example.com", 22)).toBe(true);
    expect(allowsTarget(policy, "example.com", 443)).toBe(false);
    expect(allowsTarget(policy, "notexample.com", 443)).toBe(false);
    expect(allowsTarget(policy, "0:0:0::1", 4873)).toBe(true);
    expect(allowsTarget(policy, "::1", 4874)).toBe(false);
    expect(isExempt(policy, "0::1", 4873)).toBe(true);
    expect(isExempt(policy, "127.0.0.1", 4873)).toBe(false);
  });
});

describe("addresses the proxy never connects to", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["::1", "loopback"],
    ["0.0.0.0", "unspecified"],
    ["::", "unspecified"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "private"],
    ["100.100.100.200", "private"],
    ["fd00:ec2::254", "private"],
    ["fc00::1", "private"],
    ["fec0::1", "private"],
    ["169.254.169.254", "link-local"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["224.0.0.1", "multicast"],
    ["ff02::1", "multicast"],
    ["255.255.255.255", "broadcast or reserved"],
    ["240.0.0.1", "broadcast or reserved"],
    ["192.0.0.192", "reserved"],
    ["198.18.0.1", "reserved"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:169.254.169.254", "link-local"],
    ["::ffff:10.0.0.1", "private"],
    ["::127.0.0.1", "loopback"],
    ["64:ff9b::10.0.0.1", "private"],
    ["64:ff9b::a9fe:a9fe", "link-local"],
    ["2002:7f00:1::", "loopback"],
    ["2002:c0a8:101::1", "private"],
    ["2001::a9fe:a9fe", "reserved"],
    ["2001:db8::1", "reserved"],
    ["::ffff:0:7f00:1", "not a global unicast address"],
    ["64:ff9b:1::a9fe:a9fe", "not a global unicast address"],
    ["4000::1", "not a global unicast address"],
  ])("%s is %s", (address, reason) => {
    expect(forbiddenAddress(address)).toBe(reason);
  });

  it.each([
    "93.184.216.34",
    "8.8.8.8",
    "172.32.0.1",
    "100.128.0.1",
    "192.0.1.1",
    "2606:4700::1111",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1",
  ])("%s is public", (address) => {
    expect(forbiddenAddress(address)).toBeNull();
  });
});
