import type { RepoConfig } from "../../config/repo-config.js";
import {
  formatEgressEntry,
  REGISTRY_ENTRIES,
  resolveEgressPolicy,
  type EgressPolicy,
} from "../../workspace/egress-policy.js";
import { openJobNetwork, type JobNetwork } from "../../workspace/egress-proxy.js";
import type { WorkflowDeps } from "../deps.js";

/**
 * The build's network, opened once for its setup, agent and verification commands: the repository's
 * `network:` held under the App's BLUEPRINT_NETWORK_ALLOW. What the ceiling cut, and a proxy that
 * could not start, go into the report's notes.
 */
export async function openBuildNetwork(deps: WorkflowDeps, config: RepoConfig, notes: string[]): Promise<JobNetwork> {
  const { policy, dropped } = resolveEgressPolicy(config.network, deps.networkCeiling ?? REGISTRY_ENTRIES);
  if (dropped.length > 0) {
    const names = dropped.map((entry) => `\`${formatEgressEntry(entry)}\``).join(", ");
    notes.push(
      `⚠️ \`network:\` in \`.github/blueprint.yml\` allows ${names}, which this App does not (its BLUEPRINT_NETWORK_ALLOW): commands could not reach ${dropped.length === 1 ? "it" : "them"}.`,
    );
  } else if (config.network !== "none" && policy.allow.length === 0) {
    notes.push(
      "⚠️ `network:` in `.github/blueprint.yml` asks for the package registries, but this App allows none of them (its BLUEPRINT_NETWORK_ALLOW): commands had no network.",
    );
  }
  const network = await openPolicyNetwork(deps, policy);
  if (network.state.kind === "failed") {
    notes.push(`⚠️ ${network.state.problem}: commands were not run, rather than run with another network.`);
    deps.log.error(
      { problem: network.state.problem },
      "a build's network proxy could not start; its commands are not run",
    );
  }
  return network;
}

/**
 * The setup's network: the package registries (as far as BLUEPRINT_NETWORK_ALLOW allows them, with its
 * `address:port` mirrors) together with whatever the repository's `network:` allows, for the setup
 * command alone. When that is what the build's network allows already, the build's network is used.
 */
export async function openSetupNetwork(
  deps: WorkflowDeps,
  config: RepoConfig,
  build: JobNetwork,
): Promise<{ network: JobNetwork; own: boolean }> {
  const ceiling = deps.networkCeiling ?? REGISTRY_ENTRIES;
  const registries = resolveEgressPolicy("registries", ceiling).policy;
  const allow = [...build.policy.allow, ...registries.allow];
  const exempt = [...build.policy.exempt, ...registries.exempt];
  const known = new Set(build.policy.allow.map(formatEgressEntry));
  if (allow.every((entry) => known.has(formatEgressEntry(entry)))) return { network: build, own: false };
  const unique = <T>(items: T[], key: (item: T) => string) => [
    ...new Map(items.map((item) => [key(item), item])).values(),
  ];
  const policy: EgressPolicy = {
    allow: unique(allow, formatEgressEntry),
    exempt: unique(exempt, (entry) => `${entry.address}:${entry.port}`),
  };
  return { network: await openPolicyNetwork(deps, policy), own: true };
}

async function openPolicyNetwork(deps: WorkflowDeps, policy: EgressPolicy): Promise<JobNetwork> {
  return openJobNetwork(policy, {
    // The plain runner's commands have no bridge: they reach the proxy on the host's loopback.
    tcp: deps.runner.isolation === "plain",
    onRefusal: refusalLog(deps.log),
  });
}

/** Hosts whose refusal is logged by name, as many as the report counts by name. */
const MAX_LOGGED_HOSTS = 30;
/** Refusals of further hosts are summed into one line at most this often. */
const OVERFLOW_LOG_MS = 60_000;

/**
 * Logs a refused connection once per host, for the first MAX_LOGGED_HOSTS hosts; the rest are counted
 * and summed in one line a minute at most. A command that tries endless unique names (tens of thousands
 * a second over one connection) must grow neither the App's memory nor its log.
 */
export function refusalLog(
  log: WorkflowDeps["log"],
  now: () => number = Date.now,
): (refusal: { host: string; port: number; reason: string }) => void {
  const logged = new Set<string>();
  let unlogged = 0;
  let lastSummary = -Infinity;
  return ({ host, port, reason }) => {
    if (logged.has(host)) return;
    if (logged.size < MAX_LOGGED_HOSTS) {
      logged.add(host);
      log.info({ host, port }, `network: refused ${host}:${port} (${reason})`);
      return;
    }
    unlogged++;
    if (now() - lastSummary < OVERFLOW_LOG_MS) return;
    lastSummary = now();
    log.info(
      { unlogged },
      `network: refused connections to ${unlogged} more hosts beyond the first ${MAX_LOGGED_HOSTS} (not logged one by one)`,
    );
  };
}

/** `network: blocked example.com ×3`, one line per refused host, for the build report. */
export function networkReportLines(network: JobNetwork | null): string[] {
  return (network?.refusals() ?? []).map(({ host, count }) => `network: blocked ${host} ×${count}`);
}
