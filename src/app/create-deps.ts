import path from "node:path";
import { createModelClient, describeRetry } from "../agent/model.js";
import { createRedactor } from "../agent/redact.js";
import { ConfigError, workdirLimitBytes, type BlueprintEnv } from "../config/env.js";
import { createCommandRunner } from "../workspace/command-runner.js";
import { RepoCache } from "../workspace/repo-cache.js";
import { WorkdirKeeper } from "../workspace/workdir-keeper.js";
import { deriveStateKey, type StateKey } from "../github/state-marker.js";
import type { Logger, WorkflowDeps } from "../workflow/deps.js";
import { sandboxFor } from "./sandbox-choice.js";

/**
 * Wires the engine from the environment; the same for the App, the Action and the CLI. A process that
 * must not hold the secret the key comes from (a worker) passes the derived key itself.
 */
export function createWorkflowDeps(
  env: BlueprintEnv,
  log: Logger,
  extraSecrets: string[] = [],
  stateKey?: StateKey,
): WorkflowDeps {
  const repoCache = new RepoCache(env.BLUEPRINT_WORKDIR, {
    poolSize: env.BLUEPRINT_WORKTREE_POOL,
    maxFetches: env.BLUEPRINT_MAX_FETCHES,
  });
  return {
    modelFor: (config, onRetry) =>
      createModelClient({
        baseURL: env.OPENAI_BASE_URL,
        apiKey: env.OPENAI_API_KEY,
        model: config.model ?? env.BLUEPRINT_MODEL,
        timeoutMs: env.BLUEPRINT_MODEL_TIMEOUT_S * 1000,
        maxRetries: env.BLUEPRINT_MODEL_RETRIES,
        onRetry: (retry) => {
          log.warn({ attempt: retry.attempt, attempts: retry.attempts, reason: retry.reason }, describeRetry(retry));
          onRetry?.(retry);
        },
      }),
    repoCache,
    workdir: new WorkdirKeeper(repoCache, { maxBytes: workdirLimitBytes(env), log }),
    runner: createCommandRunner({ bwrapPath: sandboxFor(env, log), hide: hiddenFromCommands(env) }),
    networkCeiling: env.BLUEPRINT_NETWORK_ALLOW,
    limits: {
      maxIterations: env.BLUEPRINT_MAX_ITERATIONS,
      maxWallTimeMs: env.BLUEPRINT_MAX_MINUTES * 60_000,
      maxTokens: env.BLUEPRINT_MAX_TOKENS,
    },
    prices: env.BLUEPRINT_PRICES,
    maxCost: env.BLUEPRINT_MAX_COST,
    minPermission: env.BLUEPRINT_MIN_PERMISSION,
    progressIntervalMs: env.BLUEPRINT_PROGRESS_INTERVAL_MS,
    identity: { name: env.BLUEPRINT_BOT_NAME, email: env.BLUEPRINT_BOT_EMAIL },
    redact: createRedactor([
      env.OPENAI_API_KEY,
      env.WEBHOOK_SECRET,
      env.PRIVATE_KEY,
      env.BLUEPRINT_STATE_SECRET,
      ...extraSecrets,
    ]),
    stateKey: stateKey ?? stateKeyOf(env),
    log,
  };
}

/** BLUEPRINT_STATE_SECRET wins (workers get it instead of the webhook secret); the App falls back to WEBHOOK_SECRET. */
export function stateKeyOf(env: BlueprintEnv): StateKey {
  const secret = env.BLUEPRINT_STATE_SECRET ?? env.WEBHOOK_SECRET;
  if (!secret)
    throw new ConfigError(
      "no secret to sign Blueprint's hidden plan state with: set BLUEPRINT_STATE_SECRET (at least 16 characters, e.g. `openssl rand -hex 32`), or WEBHOOK_SECRET for the App",
    );
  return deriveStateKey(secret);
}

/**
 * What the sandbox hides even inside the system directories it shows (/etc, /opt, /usr): the App's
 * directory (its `.env`), the whole work directory (every job's worktree and every installation's
 * mirror; the job's own are bound back on top) and the private key's directory, or only the key
 * when it lies directly in a system directory (hiding all of /etc would break the commands).
 */
function hiddenFromCommands(env: Pick<BlueprintEnv, "BLUEPRINT_WORKDIR" | "PRIVATE_KEY_PATH">): string[] {
  const hidden = [process.cwd(), path.resolve(env.BLUEPRINT_WORKDIR)];
  if (env.PRIVATE_KEY_PATH) {
    const key = path.resolve(env.PRIVATE_KEY_PATH);
    const dir = path.dirname(key);
    hidden.push(path.dirname(dir) === "/" ? key : dir);
  }
  return hidden;
}
