import type { RepoConfig } from "../config/repo-config.js";
import { REPO_CONFIG_PATH } from "../config/repo-config.js";
import type { WorkflowDeps } from "./deps.js";

export type ModelChoice = { ok: true; config: RepoConfig } | { ok: false; message: string };

/**
 * The configuration a plan's runs use: with the model `/plan --model` picked, when the repository's
 * `models:` (default branch) still lists it, checked again at every run, since the list may change
 * between the plan and its build. Without a pick, the configuration as it is.
 */
export function withPickedModel(
  deps: Pick<WorkflowDeps, "modelFor">,
  config: RepoConfig,
  picked: string | null,
): ModelChoice {
  if (picked === null) return { ok: true, config };
  const allowed = config.models ?? [];
  if (allowed.includes(picked)) return { ok: true, config: { ...config, model: picked } };
  const fallback = deps.modelFor(config).model;
  if (allowed.length === 0) {
    return {
      ok: false,
      message: `\`/plan --model ${picked}\` cannot be used here: \`${REPO_CONFIG_PATH}\` on the default branch has no \`models:\` list, so every plan uses \`${fallback}\`. To let people pick, list the models there, e.g. \`models: [${fallback}, ${picked}]\`.`,
    };
  }
  return {
    ok: false,
    message: `\`${picked}\` is not one of the models this repository allows (\`models:\` in \`${REPO_CONFIG_PATH}\`): ${allowed.map((name) => `\`${name}\``).join(", ")}.`,
  };
}

/** What to do after a refused pick. */
export function pickAdvice(deps: Pick<WorkflowDeps, "modelFor">, config: RepoConfig): string {
  const allowed = config.models ?? [];
  const pick =
    allowed.length > 0
      ? `\`/plan --model NAME\` with one of ${allowed.map((name) => `\`${name}\``).join(", ")}, or `
      : "";
  return `Comment ${pick}\`/plan\` to plan with \`${deps.modelFor(config).model}\`.`;
}
