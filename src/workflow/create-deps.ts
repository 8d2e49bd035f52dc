import { createModelClient } from "../agent/model.js";
import { createRedactor } from "../agent/redact.js";
import type { BlueprintEnv } from "../config/env.js";
import { createCommandRunner } from "../workspace/command-runner.js";
import { RepoCache } from "../workspace/repo-cache.js";
import type { Logger, WorkflowDeps } from "./deps.js";

/** Wires the engine from the environment; the same for the App, the Action and the CLI. */
export function createWorkflowDeps(env: BlueprintEnv, log: Logger, extraSecrets: string[] = []): WorkflowDeps {
  return {
    modelFor: (config) =>
      createModelClient({
        baseURL: env.OPENAI_BASE_URL,
        apiKey: env.OPENAI_API_KEY,
        model: config.model ?? env.BLUEPRINT_MODEL,
        timeoutMs: env.BLUEPRINT_MODEL_TIMEOUT_S * 1000,
        maxRetries: env.BLUEPRINT_MODEL_RETRIES,
      }),
    repoCache: new RepoCache(env.BLUEPRINT_WORKDIR),
    runner: createCommandRunner(),
    limits: {
      maxIterations: env.BLUEPRINT_MAX_ITERATIONS,
      maxWallTimeMs: env.BLUEPRINT_MAX_MINUTES * 60_000,
      maxTokens: env.BLUEPRINT_MAX_TOKENS,
    },
    minPermission: env.BLUEPRINT_MIN_PERMISSION,
    progressIntervalMs: env.BLUEPRINT_PROGRESS_INTERVAL_MS,
    identity: { name: env.BLUEPRINT_BOT_NAME, email: env.BLUEPRINT_BOT_EMAIL },
    redact: createRedactor([env.OPENAI_API_KEY, env.WEBHOOK_SECRET, env.PRIVATE_KEY, ...extraSecrets]),
    log,
  };
}
