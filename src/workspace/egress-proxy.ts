import dns from "node:dns/promises";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type { Duplex } from "node:stream";
import {
  allowsTarget,
  canonicalAddress,
  forbiddenAddress,
  isExempt,
  isHostName,
  NO_EGRESS,
  refusedTarget,
  type EgressPolicy,
} from "./egress-policy.js";

/**
 * A job's way out of its network namespace: an HTTP proxy (CONNECT, and plain HTTP requests in
 * absolute form) on a Unix socket of its own, which the sandbox bridge (sandbox-bridge.ts) reaches
 * from inside. It lets through the hosts of the job's policy and nothing else: it resolves each
 * name itself, refuses when any address is loopback, private, link-local or otherwise not public
 * (unless the operator named that exact address:port), and connects to the address it checked.
 */

export type JobNetworkState =
  /** The policy allows no host: commands get no proxy, only their namespace's loopback. */
  | { kind: "offline" }
  /** `tcpPort`: also on 127.0.0.1 of the host, for the plain runner, which has no bridge. */
  | {
      kind: "proxy";
      socketPath: string;
      /** The directory every job's socket directory of this process lies in: a sandbox hides all of it. */
      socketRoot: string;
      tcpPort: number | null;
    }
  /** The proxy could not start: commands are not run rather than run with another network. */
  | { kind: "failed"; problem: string };

export interface JobNetwork {
  readonly policy: EgressPolicy;
  readonly state: JobNetworkState;
  /**
   * Refused connections so far, per host (`host:port` where the policy allows that host on some ports only), in the
   * order first refused.
   */
  refusals(): Array<{ host: string; count: number }>;
  close(): Promise<void>;
}

export interface JobNetworkOptions {
  /** Also listen on a free port of the host's 127.0.0.1 (the plain runner's commands have no bridge). */
  tcp?: boolean;
  /**
   * Where the job's 0700 socket directory is made; default this process's own 0700 directory under the
   * OS temp dir, which every sandbox hides whole, so no job reaches another job's proxy even where the
   * temp dir lies in a directory sandboxes show.
   */
  socketRoot?: string;
  /** Name resolution, every address of a name; default dns.lookup. */
  lookup?: (host: string) => Promise<string[]>;
  /** Hears each refusal (for the log). */
  onRefusal?: (refusal: { host: string; port: number; reason: string }) => void;
}

/** No network: what commands get when nothing opened one. */
export const OFFLINE: JobNetwork = {
  policy: NO_EGRESS,
  state: { kind: "offline" },
  refusals: () => [],
  close: async () => undefined,
};

/** A tunnel or request left idle this long is closed. */
const IDLE_MS = 5 * 60_000;
/**
 * Hosts counted by name; refusals of further hosts are counted together (a command cannot grow the App's memory or the
 * report without end).
 */
const MAX_REFUSED_HOSTS = 30;
const OTHER_HOSTS = "(other hosts)";
/** Open client connections per job; past it the proxy answers 503 (a command cannot use up the App's descriptors). */
const MAX_CONNECTIONS = 256;

let processSocketRoot: string | null = null;

/**
 * The longest path a Unix socket may have on Linux (108 bytes with the closing NUL). Node binds a longer one cut
 * short, silently, at a path nothing connects to: the check below makes that a clear failure instead.
 */
const MAX_SOCKET_PATH_BYTES = 107;
/** What the socket path adds to its root: `/blueprint-egress-XXXXXX/proxy.sock`. */
const SOCKET_PATH_TAIL_BYTES = "/blueprint-egress-XXXXXX/proxy.sock".length;

/**
 * This process's directory for its jobs' socket directories, made once (0700): in the temporary directory, or in
 * /tmp when the temporary directory's path is too long to hold a socket.
 */
function defaultSocketRoot(): string {
  const root = "/blueprint-egress-root-XXXXXX".length + SOCKET_PATH_TAIL_BYTES;
  const tmp = Buffer.byteLength(os.tmpdir()) + root <= MAX_SOCKET_PATH_BYTES ? os.tmpdir() : "/tmp";
  processSocketRoot ??= mkdtempSync(path.join(tmp, "blueprint-egress-root-"));
  chmodSync(processSocketRoot, 0o700);
  return processSocketRoot;
}

/** Starts the job's proxy. Never throws: a proxy that cannot start gives a "failed" network. */
export async function openJobNetwork(policy: EgressPolicy, options: JobNetworkOptions = {}): Promise<JobNetwork> {
  if (policy.allow.length === 0) return { ...OFFLINE, policy };
  const refused = new Map<string, number>();
  const refusals = () => [...refused].map(([host, count]) => ({ host, count }));
  let dir: string | null = null;
  const open = new Set<Duplex>();
  const servers: net.Server[] = [];
  const closeAll = async () => {
    for (const socket of open) socket.destroy();
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    if (dir) rmSync(dir, { recursive: true, force: true });
  };
  try {
    const socketRoot = options.socketRoot ?? defaultSocketRoot();
    dir = mkdtempSync(path.join(socketRoot, "blueprint-egress-"));
    chmodSync(dir, 0o700);
    const socketPath = path.join(dir, "proxy.sock");
    if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH_BYTES) {
      throw new Error(`its socket's path is over ${MAX_SOCKET_PATH_BYTES} bytes, a Unix socket's limit: ${socketPath}`);
    }
    const gate = new EgressGate(policy, options.lookup ?? lookupAll, (host, port, reason) => {
      const target = refusedTarget(policy, host, port);
      const key = refused.has(target) || refused.size < MAX_REFUSED_HOSTS ? target : OTHER_HOSTS;
      refused.set(key, (refused.get(key) ?? 0) + 1);
      options.onRefusal?.({ host, port, reason });
    });
    const handler = proxyServer(gate, open);
    servers.push(handler);
    await listen(handler, socketPath);
    let tcpPort: number | null = null;
    if (options.tcp) {
      const tcp = proxyServer(gate, open);
      servers.push(tcp);
      await listen(tcp, 0, "127.0.0.1");
      tcpPort = (tcp.address() as net.AddressInfo).port;
    }
    return { policy, state: { kind: "proxy", socketPath, socketRoot, tcpPort }, refusals, close: closeAll };
  } catch (error) {
    await closeAll().catch(() => undefined);
    const problem = `Blueprint's network proxy could not start (${error instanceof Error ? error.message : String(error)})`;
    return { policy, state: { kind: "failed", problem }, refusals, close: async () => undefined };
  }
}

async function lookupAll(host: string): Promise<string[]> {
  return (await dns.lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
}

function listen(server: net.Server, where: string | number, host?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    const done = () => {
      server.off("error", reject);
      resolve();
    };
    if (typeof where === "string") server.listen(where, done);
    else server.listen(where, host, done);
  });
}

type Verdict = { ok: true; addresses: string[] } | { ok: false; status: number; reason: string };

/** The policy, applied to one destination: which addresses to connect to, or why not. */
class EgressGate {
  constructor(
    private readonly policy: EgressPolicy,
    private readonly lookup: (host: string) => Promise<string[]>,
    private readonly refuse: (host: string, port: number, reason: string) => void,
  ) {}

  async check(rawHost: string, port: number): Promise<Verdict> {
    const host = rawHost
      .toLowerCase()
      .replace(/^\[(.*)\]$/, "$1")
      .replace(/\.$/, "");
    const refusal = (reason: string): Verdict => {
      this.refuse(net.isIP(host) ? canonicalAddress(host) : host, port, reason);
      return { ok: false, status: 403, reason: `Blueprint refused ${host}:${port}: ${reason}.` };
    };
    // Only names and addresses are counted by name: the report must not carry whatever a command sent.
    if (!net.isIP(host) && !isHostName(host)) {
      this.refuse("(malformed host)", port, "not a host name or address");
      return {
        ok: false,
        status: 400,
        reason: "Blueprint refused a destination that is not a host name or an address.",
      };
    }
    if (!allowsTarget(this.policy, host, port))
      return refusal(
        "it is not on this job's network allow-list (`network:` in .github/blueprint.yml, within the App's BLUEPRINT_NETWORK_ALLOW)",
      );
    let addresses: string[];
    try {
      addresses = net.isIP(host) ? [host] : await this.lookup(host);
    } catch (error) {
      return {
        ok: false,
        status: 502,
        reason: `Blueprint could not resolve ${host}: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
    if (addresses.length === 0)
      return { ok: false, status: 502, reason: `Blueprint could not resolve ${host}: no address` };
    // Every address is checked, not only the first: a name may list a public and a loopback one.
    for (const address of addresses) {
      const why = forbiddenAddress(address);
      if (why && !isExempt(this.policy, address, port)) return refusal(`it resolves to ${address}, a ${why} address`);
    }
    return { ok: true, addresses };
  }
}

function proxyServer(gate: EgressGate, open: Set<Duplex>): http.Server {
  const server = http.createServer();
  server.on("connection", (socket: net.Socket) => {
    if (open.size >= MAX_CONNECTIONS) {
      socket.end("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    track(open, socket);
  });
  // A connection that breaks mid-way ends only itself: nothing a command does may reject unhandled in the App.
  server.on(
    "connect",
    (request: http.IncomingMessage, client: Duplex, head: Buffer) =>
      void tunnel(gate, open, request, client, head).catch(() => client.destroy()),
  );
  server.on(
    "request",
    (request: http.IncomingMessage, response: http.ServerResponse) =>
      void forward(gate, open, request, response).catch(() => response.destroy()),
  );
  return server;
}

function track(open: Set<Duplex>, socket: net.Socket | Duplex): void {
  open.add(socket);
  if (socket instanceof net.Socket) socket.setTimeout(IDLE_MS, () => socket.destroy());
  socket.on("close", () => open.delete(socket));
  socket.on("error", () => socket.destroy());
}

/** `CONNECT host:port`: HTTPS, git over https, anything that tunnels. */
async function tunnel(
  gate: EgressGate,
  open: Set<Duplex>,
  request: http.IncomingMessage,
  client: Duplex,
  head: Buffer,
): Promise<void> {
  client.on("error", () => client.destroy());
  const target = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(request.url ?? "");
  const port = Number(target?.[2]);
  if (!target?.[1] || port < 1 || port > 65535) return answer(client, 400, "CONNECT needs host:port.");
  const verdict = await gate.check(target[1], port);
  if (!verdict.ok) return answer(client, verdict.status, verdict.reason);
  const upstream = await connectFirst(verdict.addresses, port).catch((error: unknown) => error as Error);
  if (upstream instanceof Error)
    return answer(client, 502, `Blueprint could not connect to ${target[1]}:${port}: ${upstream.message}`);
  if (client.destroyed) return void upstream.destroy();
  track(open, upstream);
  client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
  if (head.length > 0) upstream.write(head);
  upstream.pipe(client);
  client.pipe(upstream);
  client.on("close", () => upstream.destroy());
  // Gracefully: what the destination sent last must still reach the command.
  upstream.on("close", () => client.end());
}

/** Connects to the checked addresses in turn (never to the name: it is not resolved again). */
async function connectFirst(addresses: string[], port: number): Promise<net.Socket> {
  let last: Error = new Error("no address");
  for (const address of addresses) {
    try {
      return await new Promise<net.Socket>((resolve, reject) => {
        const socket = net.connect({ host: address, port });
        socket.once("connect", () => {
          socket.off("error", reject);
          resolve(socket);
        });
        socket.once("error", reject);
      });
    } catch (error) {
      last = error instanceof Error ? error : new Error(String(error));
    }
  }
  throw last;
}

/** Hop-by-hop headers, which belong to the connection to the proxy and are not passed on. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "upgrade",
]);

/** `GET http://host/path`: plain HTTP through the proxy. */
async function forward(
  gate: EgressGate,
  open: Set<Duplex>,
  request: http.IncomingMessage,
  response: http.ServerResponse,
): Promise<void> {
  let url: URL;
  try {
    url = new URL(request.url ?? "");
  } catch {
    return void response
      .writeHead(400, { "content-type": "text/plain" })
      .end("Blueprint's proxy takes CONNECT or absolute http:// URLs.\n");
  }
  if (url.protocol !== "http:")
    return void response
      .writeHead(400, { "content-type": "text/plain" })
      .end("Only http:// is forwarded; https goes through CONNECT.\n");
  const port = Number(url.port || 80);
  const verdict = await gate.check(url.hostname, port);
  if (!verdict.ok)
    return void response.writeHead(verdict.status, { "content-type": "text/plain" }).end(`${verdict.reason}\n`);
  const headers: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(request.headers))
    if (!HOP_BY_HOP.has(name) && value !== undefined) headers[name] = value;
  headers.host = url.host;
  let upstream: net.Socket;
  try {
    upstream = await connectFirst(verdict.addresses, port);
  } catch (error) {
    return void response
      .writeHead(502, { "content-type": "text/plain" })
      .end(`Blueprint could not connect to ${url.host}: ${error instanceof Error ? error.message : String(error)}\n`);
  }
  track(open, upstream);
  // The request goes over the socket already connected to the checked address; its options name that
  // address too, so that whatever hooks Node's http (a test's nock) sees the true destination, not "localhost".
  const outgoing = http.request({
    method: request.method,
    host: upstream.remoteAddress,
    port,
    path: `${url.pathname}${url.search}`,
    headers,
    createConnection: () => upstream,
    setHost: false,
  });
  outgoing.on("response", (reply) => {
    const replyHeaders: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(reply.headers))
      if (!HOP_BY_HOP.has(name) && value !== undefined) replyHeaders[name] = value;
    response.writeHead(reply.statusCode ?? 502, replyHeaders);
    reply.pipe(response);
    reply.on("end", () => upstream.destroy());
  });
  outgoing.on("error", (error) => {
    if (!response.headersSent)
      response.writeHead(502, { "content-type": "text/plain" }).end(`Blueprint's proxy: ${error.message}\n`);
    else response.destroy();
  });
  response.on("close", () => upstream.destroy());
  request.pipe(outgoing);
}

function answer(client: Duplex, status: number, reason: string): void {
  const phrase = http.STATUS_CODES[status] ?? "Error";
  const body = `${reason}\n`;
  client.end(
    `HTTP/1.1 ${status} ${phrase}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
