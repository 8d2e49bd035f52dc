import { costOf, formatDollars, priceFor, type ModelPrice } from "../agent/cost.js";
import type { TokenUsage } from "../agent/model.js";
import type { RepoConfig } from "../config/repo-config.js";
import { renderUsage } from "../github/plan-comment.js";
import { ESTIMATE_BASIS, estimateBuild } from "../plan/estimate.js";
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

/** The cost cap of one build in dollars: the App's, lowered (never raised) by the repository's `limits.max_cost`. */
export function maxCostFor(deps: Pick<WorkflowDeps, "maxCost">, config: RepoConfig): number | undefined {
  const caps = [deps.maxCost, config.limits.max_cost].filter((cap): cap is number => cap !== undefined);
  return caps.length > 0 ? Math.min(...caps) : undefined;
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
  if (dollars === null) return `${renderUsage(usage)}; no price is configured for \`${pricing.model}\`, so no cost is shown`;
  return `${renderUsage(usage)} — **${formatDollars(dollars)}** at \`${pricing.model}\`'s configured prices`;
}

/** Under a new plan: what planning cost, and what building it may cost, labelled as the estimate it is. */
export function renderPlanCost(plan: Plan, usage: TokenUsage, pricing: Pricing, maxCost: number | undefined): string {
  const estimate = estimateBuild(plan.steps);
  const total = estimate.prompt + estimate.completion;
  const dollars = dollarsFor({ prompt: estimate.prompt, completion: estimate.completion, cached: 0, requests: 0 }, pricing);
  const money = dollars === null ? ` (no price is configured for \`${pricing.model}\`)` : `, ≈ **${formatDollars(dollars)}** at \`${pricing.model}\`'s configured prices`;
  const perStep = estimate.steps.map((step) => `${step.id} ~${Math.round(step.tokens / 1000)}k`).join(", ");
  const { low, medium, high } = ESTIMATE_BASIS.stepTokens;
  const basis =
    `Estimate, not a measurement: it assumes ${tokens(low)} tokens for a low-complexity step, ${tokens(medium)} for a medium or unrated one and ${tokens(high)} for a high one, ` +
    `plus ${tokens(ESTIMATE_BASIS.tokensPerFile)} for each file a step names; ${Math.round(ESTIMATE_BASIS.completionShare * 100)}% of them completion, the rest prompt with none cached.`;
  return [
    `<sub>Planning: ${renderRunCost(usage, pricing)}.</sub>`,
    `**Estimated build cost:** about ${tokens(total)} tokens for ${plan.steps.length} step${plan.steps.length === 1 ? "" : "s"} (${perStep})${money}.${capLine(maxCost, dollars, pricing)}\n<sub>${basis}</sub>`,
  ].join("\n\n");
}

/** What the cost cap means for this plan, before anyone approves it. */
function capLine(maxCost: number | undefined, estimate: number | null, pricing: Pricing): string {
  if (maxCost === undefined) return "";
  if (estimate === null) return ` A cost cap of ${formatDollars(maxCost)} per build is set, but it cannot be enforced without a price for \`${pricing.model}\`.`;
  const over = estimate > maxCost ? " The estimate is over it: the build may stop at the cap, with the steps done pushed, and a further `/build` continues." : "";
  return ` Each \`/build\` is capped at ${formatDollars(maxCost)}.${over}`;
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
    const cells = [label, tokens(usage.prompt + usage.completion), `${tokens(usage.prompt)} (${tokens(usage.cached)} cached)`, tokens(usage.completion)];
    const dollars = dollarsFor(usage, pricing);
    if (dollars !== null) cells.push(formatDollars(dollars));
    return `| ${cells.join(" | ")} |`;
  };
  const header = priced ? "| Step | Tokens | Prompt | Completion | Cost |\n|---|--:|--:|--:|--:|" : "| Step | Tokens | Prompt | Completion |\n|---|--:|--:|--:|";
  const note = priced
    ? `<sub>Dollars at \`${pricing.model}\`'s configured prices; a step built over several runs counts them all.</sub>`
    : `<sub>No price is configured for \`${pricing.model}\` (\`prices:\` in \`.github/blueprint.yml\`), so only tokens are shown.</sub>`;
  return ["#### Cost", [header, ...ran.map(({ id, usage }) => row(id, usage)), row("**Total**", total)].join("\n"), note].join("\n\n");
}
