import type { Complexity, PlanStep } from "./schema.js";

/**
 * A rough guess at what building a plan takes, made before any step runs: each step is one agent
 * run whose size follows the complexity the plan gives it and the files it names. The numbers are
 * assumptions, stated wherever the estimate is shown, not measurements.
 */
export const ESTIMATE_BASIS = {
  /** Tokens (prompt and completion) one build step takes, by complexity; an unrated step counts as medium. */
  stepTokens: { low: 60_000, medium: 150_000, high: 400_000 } satisfies Record<Complexity, number>,
  /** Tokens added for each file a step names (reading it, editing it, reading it again). */
  tokensPerFile: 20_000,
  /** The share of tokens that are completion; the rest is prompt, assumed not cached (so the estimate leans high). */
  completionShare: 0.05,
} as const;

export interface BuildEstimate {
  steps: Array<{ id: string; tokens: number }>;
  prompt: number;
  completion: number;
}

export function estimateBuild(steps: PlanStep[]): BuildEstimate {
  const perStep = steps.map((step) => ({
    id: step.id,
    tokens: ESTIMATE_BASIS.stepTokens[step.complexity ?? "medium"] + step.files.length * ESTIMATE_BASIS.tokensPerFile,
  }));
  const total = perStep.reduce((sum, step) => sum + step.tokens, 0);
  const completion = Math.round(total * ESTIMATE_BASIS.completionShare);
  return { steps: perStep, prompt: total - completion, completion };
}
