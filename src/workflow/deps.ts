import type { AgentLimits } from "../agent/loop.js";
import type { PriceTable, TokenUsage } from "../shared/model-usage.js";
import type { ModelClient, ModelRetry } from "../agent/model.js";
import type { Redactor } from "../agent/redact.js";
import type { RepoConfig } from "../config/repo-config.js";
import type { PermissionLevel } from "../github/permission.js";
import type { StateKey } from "../github/state-marker.js";
import type { CommandRunner } from "../workspace/command-runner.js";
import type { EgressEntry } from "../workspace/egress-policy.js";
import type { GitIdentity } from "../workspace/untrusted-git.js";
import type { RepoCache } from "../workspace/repo-cache.js";
import type { Logger } from "../shared/logger.js";
import type { WorkdirKeeper } from "../workspace/workdir-keeper.js";
import type { ThreadPort } from "./ports.js";

export type { Logger } from "../shared/logger.js";

/** Everything a use case needs besides the thread; built once per process. */
export interface WorkflowDeps {
  /** `onRetry` hears each retry of a model request (they are logged as warnings either way). */
  modelFor(config: RepoConfig, onRetry?: (retry: ModelRetry) => void): ModelClient;
  repoCache: RepoCache;
  /**
   * Keeps `repoCache`'s directory: a running job's repository is never removed, uninstalled ones go, and
   * BLUEPRINT_WORKDIR_MAX_GB holds.
   */
  workdir?: WorkdirKeeper;
  runner: CommandRunner;
  /** The most a repository's `network:` may allow (BLUEPRINT_NETWORK_ALLOW); default the built-in registries. */
  networkCeiling?: readonly EgressEntry[];
  limits: AgentLimits;
  /** The App's prices per model (BLUEPRINT_PRICES); they win over a repository's `prices`. */
  prices?: PriceTable;
  /**
   * The App's cost cap per build in dollars (BLUEPRINT_MAX_COST); a repository's `limits.max_cost` can only lower it.
   */
  maxCost?: number | undefined;
  minPermission: PermissionLevel;
  progressIntervalMs: number;
  identity: GitIdentity;
  redact: Redactor;
  /** Signs and checks the hidden state markers; derived from a secret, never the secret itself. */
  stateKey: StateKey;
  log: Logger;
  /**
   * Told what each agent run used, for metrics: `modelUsage` once per run as it finishes (a planning
   * run; each build step), `stepSeconds` once per build step with how long its agent run took.
   */
  telemetry?: { modelUsage(kind: "plan" | "build", usage: TokenUsage): void; stepSeconds(seconds: number): void };
}

/** One command being handled on one issue or pull request. */
export interface JobContext {
  port: ThreadPort;
  actor: string;
  signal: AbortSignal;
  deliveryId: string;
}
