import { createModelClient } from "../agent/model.js";
import { createRedactor } from "../agent/redact.js";
import { ConfigError, type BlueprintEnv } from "../config/env.js";
import { createCommandRunner, findBubblewrap } from "../workspace/command-runner.js";
import { RepoCache } from "../workspace/repo-cache.js";
import { deriveStateKey, type StateKey } from "../github/state-marker.js";
import type { Logger, WorkflowDeps } from "./deps.js";

/**
 * Wires the engine from the environment; the same for the App, the Action and the CLI. A process that
 * must not hold the secret the key comes from (a worker) passes the derived key itself.
 */
export function createWorkflowDeps(env: BlueprintEnv, log: Logger, extraSecrets: string[] = [], stateKey?: StateKey): WorkflowDeps {
  return {
    modelFor: (config) =>
      createModelClient({
        baseURL: env.OPENAI_BASE_URL,
        apiKey: env.OPENAI_API_KEY,
        model: config.model ?? env.BLUEPRINT_MODEL,
        timeoutMs: env.BLUEPRINT_MODEL_TIMEOUT_S * 1000,
        maxRetries: env.BLUEPRINT_MODEL_RETRIES,
      }),
    repoCache: new RepoCache(env.BLUEPRINT_WORKDIR, { poolSize: env.BLUEPRINT_WORKTREE_POOL, maxFetches: env.BLUEPRINT_MAX_FETCHES }),
    runner: createCommandRunner({ bwrapPath: sandboxFor(env, log) }),
    limits: {
      maxIterations: env.BLUEPRINT_MAX_ITERATIONS,
      maxWallTimeMs: env.BLUEPRINT_MAX_MINUTES * 60_000,
      maxTokens: env.BLUEPRINT_MAX_TOKENS,
    },
    minPermission: env.BLUEPRINT_MIN_PERMISSION,
    progressIntervalMs: env.BLUEPRINT_PROGRESS_INTERVAL_MS,
    identity: { name: env.BLUEPRINT_BOT_NAME, email: env.BLUEPRINT_BOT_EMAIL },
    redact: createRedactor([env.OPENAI_API_KEY, env.WEBHOOK_SECRET, env.PRIVATE_KEY, env.BLUEPRINT_STATE_SECRET, ...extraSecrets]),
    stateKey: stateKey ?? stateKeyOf(env),
    log,
  };
}

/** BLUEPRINT_STATE_SECRET wins (workers get it instead of the webhook secret); the App falls back to WEBHOOK_SECRET. */
function stateKeyOf(env: BlueprintEnv): StateKey {
  const secret = env.BLUEPRINT_STATE_SECRET ?? env.WEBHOOK_SECRET;
  if (!secret) throw new ConfigError("no secret to sign Blueprint's hidden plan state with: set BLUEPRINT_STATE_SECRET (at least 16 characters, e.g. `openssl rand -hex 32`), or WEBHOOK_SECRET for the App");
  return deriveStateKey(secret);
}

function sandboxFor(env: BlueprintEnv, log: Logger): string | null {
  if (env.BLUEPRINT_SANDBOX === "none") {
    log.info({}, "agent commands run with the plain runner (BLUEPRINT_SANDBOX=none): scrubbed environment, timeout, output cap");
    return null;
  }
  const bwrap = findBubblewrap();
  if (!bwrap && env.BLUEPRINT_SANDBOX === "bwrap") {
    // `bwrap` means always: an operator who asked for the sandbox must not get commands run without it.
    throw new ConfigError("BLUEPRINT_SANDBOX=bwrap, but bubblewrap (`bwrap`) is not on PATH or cannot start here (it needs unprivileged user namespaces); install it, or set BLUEPRINT_SANDBOX=auto to fall back to the plain runner");
  }
  if (bwrap) {
    log.info({ bwrap }, "agent commands run inside bubblewrap: system read-only, workspace writable, no network unless the repository allows it");
  } else {
    log.warn({}, "bubblewrap is not available; agent commands fall back to the plain runner (scrubbed environment, timeout, output cap)");
  }
  return bwrap;
}
