import type { AgentLimits } from "../agent/loop.js";
import type { RepoConfig } from "../config/repo-config.js";

/** The run's limits: the repository's `limits:` can only lower the App's own (a repository cannot buy itself more). */
export function limitsFor(base: AgentLimits, config: RepoConfig): AgentLimits {
  const lower = (own: number, asked: number | undefined) => (asked === undefined ? own : Math.min(own, asked));
  return {
    maxIterations: lower(base.maxIterations, config.limits.max_iterations),
    maxWallTimeMs: lower(
      base.maxWallTimeMs,
      config.limits.max_minutes === undefined ? undefined : config.limits.max_minutes * 60_000,
    ),
    maxTokens: lower(base.maxTokens, config.limits.max_tokens),
  };
}
