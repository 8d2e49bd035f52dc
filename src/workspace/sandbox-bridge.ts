import path from "node:path";

/**
 * Inside the sandbox's own network namespace, the one way out: a bridge listening on the
 * namespace's 127.0.0.1 that hands each connection to the job's proxy socket (egress-proxy.ts),
 * bound read-only into the sandbox. It runs on the App's own Node binary, bound in too, so that it
 * needs nothing from the App's directory, which the sandbox hides.
 */

/** Where the proxy listens inside the sandbox (the namespace is new, so the port is always free). */
export const BRIDGE_PORT = 3128;
const MOUNT = "/run/blueprint";
const SOCKET_INSIDE = `${MOUNT}/egress/proxy.sock`;
const NODE_INSIDE = `${MOUNT}/node`;
/** Exit status of a command not run because its network (proxy or bridge) is not there. */
export const NETWORK_NOT_READY_EXIT = 125;

/** The bridge: `node -e BRIDGE_SCRIPT <socket> <port>`; prints `ready` once it listens. */
const BRIDGE_SCRIPT = `
const net = require("node:net");
const [socketPath, port] = process.argv.slice(1);
const server = net.createServer((client) => {
  const proxy = net.connect(socketPath);
  client.pipe(proxy);
  proxy.pipe(client);
  client.on("error", () => proxy.destroy());
  proxy.on("error", () => client.destroy());
  client.on("close", () => proxy.destroy());
  proxy.on("close", () => client.destroy());
});
server.on("error", (error) => {
  process.stdout.write("error: " + error.message + "\\n");
  process.exit(1);
});
server.listen(Number(port), "127.0.0.1", () => process.stdout.write("ready\\n"));
`;

/**
 * Starts the bridge in the background, waits for its `ready`, then runs the command ($5) in its
 * place. A bridge that does not start means the command is not run (fail closed, in words).
 */
const WRAPPER = `
exec 3< <(exec "$1" -e "$2" "$3" "$4")
bridge=""
IFS= read -r -t 30 bridge <&3
exec 3<&-
if [ "$bridge" != ready ]; then
  echo "Blueprint did not run this command: the network bridge inside the sandbox did not start (\${bridge:-no answer}). Commands never fall back to the host's network." >&2
  exit ${NETWORK_NOT_READY_EXIT}
fi
exec /bin/bash -c "$5"
`;

/** bubblewrap arguments that show the proxy's socket directory and the Node binary inside. */
export function bridgeMounts(socketPath: string, nodePath: string): string[] {
  return ["--ro-bind", path.dirname(socketPath), path.dirname(SOCKET_INSIDE), "--ro-bind", nodePath, NODE_INSIDE];
}

/** What bubblewrap runs: the bridge, then the command. */
export function bridgedCommand(command: string): string[] {
  return [
    "/bin/bash",
    "-c",
    WRAPPER,
    "blueprint-bridge",
    NODE_INSIDE,
    BRIDGE_SCRIPT,
    SOCKET_INSIDE,
    String(BRIDGE_PORT),
    command,
  ];
}

/** The variables that point npm, pip, git, curl, Yarn, Cargo and Go at a proxy. */
const PROXY_VARIABLES = [
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "http_proxy",
  "https_proxy",
  "npm_config_proxy",
  "npm_config_https_proxy",
  "YARN_HTTP_PROXY",
  "YARN_HTTPS_PROXY",
];
/** Variables that would send connections past the proxy, or to another one: never passed on. */
const BYPASS_VARIABLES = ["NO_PROXY", "no_proxy", "npm_config_noproxy", "ALL_PROXY", "all_proxy"];

/**
 * A command's environment with the job's proxy (or none): whatever proxy settings `env` had are
 * dropped. NO_PROXY is never set: an operator's mirror on an address such as 127.0.0.1 must go
 * through the proxy too.
 */
export function withProxy(env: NodeJS.ProcessEnv, url: string | null): NodeJS.ProcessEnv {
  const result = { ...env };
  for (const name of [...PROXY_VARIABLES, ...BYPASS_VARIABLES]) delete result[name];
  if (url) for (const name of PROXY_VARIABLES) result[name] = url;
  return result;
}

/** The proxy's address as commands inside the sandbox see it. */
export const BRIDGE_URL = `http://127.0.0.1:${BRIDGE_PORT}`;
