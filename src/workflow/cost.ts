import { costOf, formatDollars, priceFor } from "../agent/cost.js";
import type { ModelPrice, TokenUsage } from "../shared/model-usage.js";
import type { RepoConfig } from "../config/repo-config.js";
import { renderUsage } from "../github/plan-comment.js";
import { ESTIMATE_BASIS, estimateBuild, type BuildEstimate } from "../plan/estimate.js";
import type { Plan } from "../plan/schema.js";
import type { WorkflowDeps } from "./deps.js";
import type { ThreadState } from "./state.js";

/** The model a run uses and its price, when the App or the repository configures one. */
export interface Pricing {
  model: string;
  price: ModelPrice | null;
}

export function pricingFor(deps: Pick<WorkflowDeps, "prices">, config: RepoConfig, model: string): Pricing {
  return { model, price: priceFor(model, deps.prices ?? {}, config.prices) };
}

/** A build's cost cap in dollars and the price it is counted at; null: no price, so it cannot be enforced. */
export interface CostCap {
  dollars: number;
  price: ModelPrice | null;
  /** Said in the report when the cap is counted at prices the repository itself sets. */
  note?: string;
}

/**
 * The cost cap of one build: the App's (BLUEPRINT_MAX_COST), lowered (never raised) by the
 * repository's `limits.max_cost`, counted at one price. When the App prices models, a repository's
 * `prices:` never count against a cap: a model the App has no price for (a repository can pick any
 * name in `model:` and call it free) is counted at the App's dearest prices.
 */
export function costCapFor(
  deps: Pick<WorkflowDeps, "maxCost" | "prices">,
  config: RepoConfig,
  model: string,
): CostCap | undefined {
  const caps = [deps.maxCost, config.limits.max_cost].filter((cap): cap is number => cap !== undefined);
  if (caps.length === 0) return undefined;
  const app = Object.values(deps.prices ?? {});
  const price = deps.prices?.[model] ?? (app.length > 0 ? dearest(app) : (config.prices?.[model] ?? null));
  const dollars = Math.min(...caps);
  // The App's own cap counted at the repository's prices: enforced, but the operator should know who sets them.
  if (deps.maxCost !== undefined && app.length === 0 && price) {
    return {
      dollars,
      price,
      note: `ℹ️ The App's cost cap of ${formatDollars(deps.maxCost)} is counted at this repository's own \`prices:\`, since the App sets none (BLUEPRINT_PRICES): the repository can set them as it likes.`,
    };
  }
  return { dollars, price };
}

/** Each of the prices' dearest rate. */
function dearest(prices: ModelPrice[]): ModelPrice {
  const most = (rate: (price: ModelPrice) => number) => Math.max(...prices.map(rate));
  return {
    input: most((price) => price.input),
    cached_input: most((price) => price.cached_input ?? price.input),
    output: most((price) => price.output),
  };
}

/** Dollars for `usage`, or null without a price. */
export function dollarsFor(usage: TokenUsage, pricing: Pricing): number | null {
  return pricing.price ? costOf(usage, pricing.price) : null;
}

export function addUsage(total: TokenUsage, more: TokenUsage): void {
  total.prompt += more.prompt;
  total.completion += more.completion;
  total.cached += more.cached;
  total.requests += more.requests;
}

const tokens = (n: number) => n.toLocaleString("en-US");

/** Tokens, and dollars when the model is priced. */
export function renderRunCost(usage: TokenUsage, pricing: Pricing): string {
  const dollars = dollarsFor(usage, pricing);
  if (dollars === null)
    return `${renderUsage(usage)}; no price is configured for \`${pricing.model}\`, so no cost is shown`;
  return `${renderUsage(usage)} — **${formatDollars(dollars)}** at \`${pricing.model}\`'s configured prices`;
}

/** Under a new plan: what planning cost, and what building it may cost, labelled as the estimate it is. */
export function renderPlanCost(plan: Plan, usage: TokenUsage, pricing: Pricing, cap: CostCap | undefined): string {
  const estimate = estimateBuild(plan.steps);
  const total = estimate.prompt + estimate.completion;
  const dollars = dollarsFor(
    { prompt: estimate.prompt, completion: estimate.completion, cached: 0, requests: 0 },
    pricing,
  );
  const money =
    dollars === null
      ? ` (no price is configured for \`${pricing.model}\`)`
      : `, ≈ **${formatDollars(dollars)}** at \`${pricing.model}\`'s configured prices`;
  const perStep = estimate.steps.map((step) => `${step.id} ~${Math.round(step.tokens / 1000)}k`).join(", ");
  const { low, medium, high } = ESTIMATE_BASIS.stepTokens;
  const basis =
    `Estimate, not a measurement: it assumes ${tokens(low)} tokens for a low-complexity step, ${tokens(medium)} for a medium or unrated one and ${tokens(high)} for a high one, ` +
    `plus ${tokens(ESTIMATE_BASIS.tokensPerFile)} for each file a step names; ${Math.round(ESTIMATE_BASIS.completionShare * 100)}% of them completion, the rest prompt with none cached.`;
  return [
    `<sub>Planning: ${renderRunCost(usage, pricing)}.</sub>`,
    `**Estimated build cost:** about ${tokens(total)} tokens for ${plan.steps.length} step${plan.steps.length === 1 ? "" : "s"} (${perStep})${money}.${capLine(cap, estimate, pricing)}\n<sub>${basis}</sub>`,
  ].join("\n\n");
}

/** What the cost cap means for this plan, before anyone approves it (the estimate counted at the cap's own price). */
function capLine(cap: CostCap | undefined, estimate: BuildEstimate, pricing: Pricing): string {
  if (cap === undefined) return "";
  if (cap.price === null)
    return ` A cost cap of ${formatDollars(cap.dollars)} per build is set, but it cannot be enforced without a price for \`${pricing.model}\`.`;
  const over =
    costOf({ prompt: estimate.prompt, completion: estimate.completion, cached: 0 }, cap.price) > cap.dollars
      ? " The estimate is over it: the build may stop at the cap, with the steps done pushed, and a further `/build` continues."
      : "";
  return ` Each \`/build\` is capped at ${formatDollars(cap.dollars)}${cap.price === pricing.price ? "" : `, counted at the App's dearest prices (it has none for \`${pricing.model}\`)`}.${over}`;
}

/** The build report's cost section: tokens (and dollars when priced) per step that has run, and their total. */
export function renderCostTable(plan: Plan, state: ThreadState, pricing: Pricing): string {
  const ran = plan.steps.flatMap((step) => {
    const usage = state.steps[step.id]?.usage;
    return usage ? [{ id: step.id, usage }] : [];
  });
  if (ran.length === 0) return "";
  const total: TokenUsage = { prompt: 0, completion: 0, cached: 0, requests: 0 };
  for (const { usage } of ran) addUsage(total, usage);
  const priced = pricing.price !== null;
  const row = (label: string, usage: TokenUsage) => {
    const cells = [
      label,
      tokens(usage.prompt + usage.completion),
      `${tokens(usage.prompt)} (${tokens(usage.cached)} cached)`,
      tokens(usage.completion),
    ];
    const dollars = dollarsFor(usage, pricing);
    if (dollars !== null) cells.push(formatDollars(dollars));
    return `| ${cells.join(" | ")} |`;
  };
  const header = priced
    ? "| Step | Tokens | Prompt | Completion | Cost |\n|---|--:|--:|--:|--:|"
    : "| Step | Tokens | Prompt | Completion |\n|---|--:|--:|--:|";
  const note = priced
    ? `<sub>Dollars at \`${pricing.model}\`'s configured prices; a step built over several runs counts them all.</sub>`
    : `<sub>No price is configured for \`${pricing.model}\` (\`prices:\` in \`.github/blueprint.yml\`), so only tokens are shown.</sub>`;
  return [
    "#### Cost",
    [header, ...ran.map(({ id, usage }) => row(id, usage)), row("**Total**", total)].join("\n"),
    note,
  ].join("\n\n");
}
