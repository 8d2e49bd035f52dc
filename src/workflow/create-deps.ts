import path from "node:path";
import { createModelClient, describeRetry } from "../agent/model.js";
import { createRedactor } from "../agent/redact.js";
import { ConfigError, type BlueprintEnv } from "../config/env.js";
import { checkBubblewrap, createCommandRunner } from "../workspace/command-runner.js";
import { RepoCache } from "../workspace/repo-cache.js";
import { deriveStateKey, type StateKey } from "../github/state-marker.js";
import type { Logger, WorkflowDeps } from "./deps.js";

/**
 * Wires the engine from the environment; the same for the App, the Action and the CLI. A process that
 * must not hold the secret the key comes from (a worker) passes the derived key itself.
 */
export function createWorkflowDeps(env: BlueprintEnv, log: Logger, extraSecrets: string[] = [], stateKey?: StateKey): WorkflowDeps {
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
    repoCache: new RepoCache(env.BLUEPRINT_WORKDIR, { poolSize: env.BLUEPRINT_WORKTREE_POOL, maxFetches: env.BLUEPRINT_MAX_FETCHES }),
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
    redact: createRedactor([env.OPENAI_API_KEY, env.WEBHOOK_SECRET, env.PRIVATE_KEY, env.BLUEPRINT_STATE_SECRET, ...extraSecrets]),
    stateKey: stateKey ?? stateKeyOf(env),
    log,
  };
}

/** BLUEPRINT_STATE_SECRET wins (workers get it instead of the webhook secret); the App falls back to WEBHOOK_SECRET. */
export function stateKeyOf(env: BlueprintEnv): StateKey {
  const secret = env.BLUEPRINT_STATE_SECRET ?? env.WEBHOOK_SECRET;
  if (!secret) throw new ConfigError("no secret to sign Blueprint's hidden plan state with: set BLUEPRINT_STATE_SECRET (at least 16 characters, e.g. `openssl rand -hex 32`), or WEBHOOK_SECRET for the App");
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

/**
 * Where agent commands run. `bwrap` (the App's default): inside bubblewrap, or the App does not
 * start. `auto` (the Action's and the CLI's default): bubblewrap when it works here, else the plain
 * runner with a warning. `none`: the plain runner, because the operator said so; every build
 * report says it too (build-report.ts).
 */
function sandboxFor(env: BlueprintEnv, log: Logger): string | null {
  if (env.BLUEPRINT_SANDBOX === "none") {
    log.warn({}, "BLUEPRINT_SANDBOX=none: agent commands run WITHOUT a sandbox, as this process's user, with only a scrubbed environment, a timeout and an output cap; they can read this process's files and environment");
    return null;
  }
  const check = checkBubblewrap();
  if ("problem" in check) {
    if (env.BLUEPRINT_SANDBOX === "bwrap") {
      // An operator who did not say otherwise must not get commands run without the sandbox.
      throw new ConfigError(`agent commands need the bubblewrap sandbox, but ${check.problem}. Install bubblewrap (apt-get install bubblewrap); in a container, start it with the options in the Dockerfile's comments (unprivileged user namespaces and a mountable /proc). To run commands without a sandbox anyway, set BLUEPRINT_SANDBOX=none.`);
    }
    log.warn({}, `${check.problem}; agent commands fall back to the plain runner (scrubbed environment, timeout, output cap; no isolation)`);
    return null;
  }
  log.info({ bwrap: check.path }, "agent commands run inside bubblewrap: system directories read-only, their own worktree writable, private /tmp, HOME and /proc, a network of their own whose only way out is the job's allow-list proxy");
  return check.path;
}
