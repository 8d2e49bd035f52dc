import net from "node:net";

/**
 * Which hosts a job's commands may reach through Blueprint's egress proxy (egress-proxy.ts): the
 * entries of `network:` in `.github/blueprint.yml`, held under the App's BLUEPRINT_NETWORK_ALLOW.
 */

/** One allow-list entry: `host`, `host:port`, `*.suffix` (any name below it), or `address:port`. */
export type EgressEntry =
  | { kind: "host"; host: string; port: number | null }
  | { kind: "suffix"; suffix: string; port: number | null }
  | { kind: "address"; address: string; port: number };

/** What the proxy lets through for one job. */
export interface EgressPolicy {
  /** Empty: the job has no network at all (no proxy runs). */
  allow: EgressEntry[];
  /**
   * The operator's explicit `address:port` entries: the only loopback, private or link-local
   * destinations the proxy ever connects to.
   */
  exempt: Array<{ address: string; port: number }>;
}

/** The repository's setting, as read from `.github/blueprint.yml`. */
export type NetworkSetting = "none" | "registries" | { allow: EgressEntry[] };

/**
 * `registries`: the public package registries most builds install from, HTTPS only. Each is the
 * host its client downloads from by default: npm and Yarn, PyPI (index and files), crates.io
 * (index and downloads), the Go module proxy and checksum database, Maven Central, RubyGems
 * (the compact index too) and NuGet.
 */
export const REGISTRY_HOSTS = [
  "registry.npmjs.org",
  "registry.yarnpkg.com",
  "pypi.org",
  "files.pythonhosted.org",
  "crates.io",
  "index.crates.io",
  "static.crates.io",
  "proxy.golang.org",
  "sum.golang.org",
  "repo.maven.apache.org",
  "repo1.maven.org",
  "rubygems.org",
  "index.rubygems.org",
  "api.nuget.org",
] as const;

export const REGISTRY_ENTRIES: readonly EgressEntry[] = REGISTRY_HOSTS.map((host) => ({
  kind: "host",
  host,
  port: 443,
}));

export const NO_EGRESS: EgressPolicy = { allow: [], exempt: [] };

const HOST_NAME = /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** Whether a destination is a plain host name (so that it can be named in a report as it is). */
export function isHostName(host: string): boolean {
  return HOST_NAME.test(host);
}

/** Parses one entry; the message says what is wrong in words a maintainer can act on. */
export function parseEgressEntry(text: string): { ok: true; entry: EgressEntry } | { ok: false; message: string } {
  const raw = text.trim().toLowerCase();
  const bad = (why: string) => ({ ok: false as const, message: `\`${text}\` ${why}` });
  if (raw === "") return bad("is empty");
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(raw);
  const [name, portText] = bracketed ? [bracketed[1] ?? "", bracketed[2]] : splitPort(raw);
  let port: number | null = null;
  if (portText !== undefined) {
    port = Number(portText);
    if (!/^\d{1,5}$/.test(portText) || port < 1 || port > 65535)
      return bad("has a port that is not a number from 1 to 65535");
  }
  if (net.isIP(name)) {
    if (port === null)
      return bad("is an address without a port: write it as address:port (e.g. 10.0.0.5:8080, [fd00::5]:8080)");
    return { ok: true, entry: { kind: "address", address: canonicalAddress(name), port } };
  }
  if (bracketed) return bad("is not an IPv6 address");
  if (name.startsWith("*.")) {
    const suffix = name.slice(2).replace(/\.$/, "");
    if (!HOST_NAME.test(suffix)) return bad("is not `*.` followed by a domain (e.g. *.example.com)");
    return { ok: true, entry: { kind: "suffix", suffix, port } };
  }
  const host = name.replace(/\.$/, "");
  if (!HOST_NAME.test(host)) return bad('is not a host name, "host:port", "*.suffix" or "address:port"');
  return { ok: true, entry: { kind: "host", host, port } };
}

function splitPort(raw: string): [string, string | undefined] {
  // More than one colon without brackets: an IPv6 address without a port (refused above as such).
  if (raw.indexOf(":") !== raw.lastIndexOf(":")) return [raw, undefined];
  const colon = raw.lastIndexOf(":");
  return colon === -1 ? [raw, undefined] : [raw.slice(0, colon), raw.slice(colon + 1)];
}

export function formatEgressEntry(entry: EgressEntry): string {
  const port = entry.port === null ? "" : `:${entry.port}`;
  if (entry.kind === "address")
    return entry.address.includes(":") ? `[${entry.address}]${port}` : `${entry.address}${port}`;
  return entry.kind === "suffix" ? `*.${entry.suffix}${port}` : `${entry.host}${port}`;
}

/**
 * BLUEPRINT_NETWORK_ALLOW: comma-separated entries; `registries` stands for the built-in list and
 * `none` for nothing at all. Unset: the built-in list.
 */
export function parseNetworkCeiling(
  text: string | undefined,
): { ok: true; entries: EgressEntry[] } | { ok: false; message: string } {
  if (text === undefined || text.trim() === "") return { ok: true, entries: [...REGISTRY_ENTRIES] };
  const entries: EgressEntry[] = [];
  const problems: string[] = [];
  for (const item of text
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean)) {
    if (item.toLowerCase() === "none") continue;
    if (item.toLowerCase() === "registries") {
      entries.push(...REGISTRY_ENTRIES);
      continue;
    }
    const parsed = parseEgressEntry(item);
    if (parsed.ok) entries.push(parsed.entry);
    else problems.push(parsed.message);
  }
  return problems.length > 0 ? { ok: false, message: problems.join("; ") } : { ok: true, entries: unique(entries) };
}

/**
 * The job's policy: the repository's setting held under the operator's ceiling. `registries` is the
 * built-in list as far as the ceiling allows it, plus the ceiling's explicit addresses. Entries of
 * an `allow` list that the ceiling does not cover at all come back in `dropped`.
 */
export function resolveEgressPolicy(
  setting: NetworkSetting,
  ceiling: readonly EgressEntry[],
): { policy: EgressPolicy; dropped: EgressEntry[] } {
  const exempt = ceiling.flatMap((entry) =>
    entry.kind === "address" ? [{ address: entry.address, port: entry.port }] : [],
  );
  if (setting === "none") return { policy: { allow: [], exempt }, dropped: [] };
  const wanted =
    setting === "registries"
      ? [...REGISTRY_ENTRIES, ...ceiling.filter((entry) => entry.kind === "address")]
      : setting.allow;
  const allow: EgressEntry[] = [];
  const dropped: EgressEntry[] = [];
  for (const entry of wanted) {
    const covered = ceiling.flatMap((limit) => intersect(entry, limit) ?? []);
    if (covered.length === 0 && setting !== "registries") dropped.push(entry);
    allow.push(...covered);
  }
  return { policy: { allow: unique(allow), exempt }, dropped };
}

/** What two entries both allow, as one entry, or null. */
function intersect(a: EgressEntry, b: EgressEntry): EgressEntry | null {
  const port = a.port === null ? b.port : b.port === null || b.port === a.port ? a.port : undefined;
  if (port === undefined) return null;
  if (a.kind === "address" || b.kind === "address") {
    return a.kind === "address" && b.kind === "address" && a.address === b.address && port !== null
      ? { ...a, port }
      : null;
  }
  if (a.kind === "host") return nameCovered(a.host, b) ? { ...a, port } : null;
  if (b.kind === "host") return nameCovered(b.host, a) ? { ...b, port } : null;
  if (a.suffix === b.suffix || a.suffix.endsWith(`.${b.suffix}`)) return { ...a, port };
  if (b.suffix.endsWith(`.${a.suffix}`)) return { ...b, port };
  return null;
}

function nameCovered(host: string, entry: Exclude<EgressEntry, { kind: "address" }>): boolean {
  return entry.kind === "host" ? entry.host === host : host.endsWith(`.${entry.suffix}`);
}

/** Whether the policy lets a command ask for `host` (a name or an address literal) at `port`. */
export function allowsTarget(policy: EgressPolicy, host: string, port: number): boolean {
  const literal = net.isIP(host) ? canonicalAddress(host) : null;
  return policy.allow.some((entry) => {
    if (entry.port !== null && entry.port !== port) return false;
    if (entry.kind === "address") return entry.address === literal;
    return literal === null && nameCovered(host, entry);
  });
}

/**
 * How a refused destination is named in a report: `host`, or `host:port` (`[address]:port`) where the policy allows
 * that host on some ports only — then the port is what was refused (`blocked 127.0.0.1:43961` while
 * `127.0.0.1:38403` is allowed, not a bare `127.0.0.1`).
 */
export function refusedTarget(policy: EgressPolicy, host: string, port: number): string {
  const literal = net.isIP(host) ? canonicalAddress(host) : null;
  const portBound = policy.allow.some(
    (entry) =>
      entry.port !== null &&
      (entry.kind === "address" ? entry.address === literal : literal === null && nameCovered(host, entry)),
  );
  if (!portBound) return host;
  return literal?.includes(":") ? `[${literal}]:${port}` : `${literal ?? host}:${port}`;
}

/** Whether the operator named exactly this address and port. */
export function isExempt(policy: EgressPolicy, address: string, port: number): boolean {
  const canonical = canonicalAddress(address);
  return policy.exempt.some((entry) => entry.address === canonical && entry.port === port);
}

function unique(entries: EgressEntry[]): EgressEntry[] {
  const seen = new Map(entries.map((entry) => [formatEgressEntry(entry), entry]));
  return [...seen.values()];
}

/** One spelling per address, so that `::1` and `0:0::1` compare equal. */
export function canonicalAddress(address: string): string {
  const bare = address.replace(/%.*$/, "");
  // The URL parser writes IPv6 in its canonical (RFC 5952) form.
  return net.isIPv6(bare) ? new URL(`http://[${bare}]/`).hostname.slice(1, -1) : bare;
}

/**
 * Why the proxy must never connect to this address, or null for a public one: loopback, private
 * (RFC 1918, shared 100.64/10, unique-local fc00::/7), link-local (169.254/16 with the cloud
 * metadata endpoint, fe80::/10), multicast, unspecified, broadcast and reserved ranges, also when
 * written inside IPv6 (IPv4-mapped, IPv4-compatible, NAT64, 6to4).
 */
export function forbiddenAddress(address: string): string | null {
  const bare = address.replace(/%.*$/, "");
  if (net.isIPv4(bare)) return forbiddenIpv4(bare.split(".").map(Number));
  const groups = ipv6Groups(bare);
  if (!groups) return "not an IP address";
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const embedded = [g6 >> 8, g6 & 0xff, g7 >> 8, g7 & 0xff];
  const zeroHead = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (zeroHead && g5 === 0 && g6 === 0 && g7 === 0) return "unspecified";
  if (zeroHead && g5 === 0 && g6 === 0 && g7 === 1) return "loopback";
  // IPv4-mapped (::ffff:a.b.c.d) and the old IPv4-compatible form (::a.b.c.d).
  if (zeroHead && (g5 === 0xffff || g5 === 0)) return forbiddenIpv4(embedded);
  // NAT64 (64:ff9b::/96) reaches the IPv4 address inside it.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return forbiddenIpv4(embedded);
  // 6to4 (2002::/16) carries an IPv4 address in its second and third groups.
  if (g0 === 0x2002) return forbiddenIpv4([g1 >> 8, g1 & 0xff, g2 >> 8, g2 & 0xff]);
  if ((g0 & 0xffc0) === 0xfe80) return "link-local";
  if ((g0 & 0xffc0) === 0xfec0 || (g0 & 0xfe00) === 0xfc00) return "private";
  if ((g0 & 0xff00) === 0xff00) return "multicast";
  if (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) return "reserved";
  // Teredo and documentation addresses carry or stand for other hosts.
  if (g0 === 0x2001 && (g1 === 0 || g1 === 0xdb8)) return "reserved";
  // Past the forms above, only global unicast (2000::/3) is public: an allow-list, so that a form not
  // named here (IPv4-translated ::ffff:0:0/96, local-use NAT64 64:ff9b:1::/48, …) is refused, not let through.
  if ((g0 & 0xe000) !== 0x2000) return "not a global unicast address";
  return null;
}

function forbiddenIpv4(bytes: number[]): string | null {
  const [a = 0, b = 0, c = 0] = bytes;
  if (a === 0) return "unspecified";
  if (a === 127) return "loopback";
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127))
    return "private";
  if (a === 169 && b === 254) return "link-local";
  if (a >= 224 && a <= 239) return "multicast";
  if (a >= 240) return "broadcast or reserved";
  // 192.0.0.0/24 (one cloud's metadata endpoint is 192.0.0.192) and 198.18.0.0/15 (benchmarking).
  if ((a === 192 && b === 0 && c === 0) || (a === 198 && (b === 18 || b === 19))) return "reserved";
  return null;
}

/** The eight 16-bit groups of an IPv6 address, or null when it is not one. */
function ipv6Groups(address: string): number[] | null {
  if (!net.isIPv6(address)) return null;
  // The URL parser expands an embedded IPv4 tail into hex groups; the rest is a plain split.
  const hex = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const [head = "", tail] = hex.split("::");
  const part = (text: string) => (text === "" ? [] : text.split(":").map((group) => parseInt(group, 16)));
  const front = part(head);
  const back = tail === undefined ? [] : part(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}
