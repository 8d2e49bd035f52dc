import { costOf, formatDollars } from "../../agent/cost.js";
import type { ModelPrice, TokenUsage } from "../../shared/model-usage.js";
import type { RepoConfig } from "../../config/repo-config.js";
import type { Plan } from "../../plan/schema.js";
import type { AuditEntry } from "../../tools/tool.js";
import type { JobNetwork } from "../../workspace/egress-proxy.js";
import { networkReportLines } from "./network.js";
import { renderBuildReport, type VerificationResult } from "./report.js";
import { costCapFor, pricingFor, type Pricing } from "../cost.js";
import type { WorkflowDeps } from "../deps.js";
import { limitsFor } from "../limits.js";
import type { ThreadState } from "../state.js";

/** What a build spends and does, and the report that shows it. */
export interface BuildLedger {
  usage: TokenUsage;
  audit: AuditEntry[];
  maxWallTimeMs: number;
  pricing: Pricing;
  /** The build's cost cap with the price it is counted at, or null. */
  budget: CostBudget | null;
  /** One network for all the build's commands, once it is open. */
  network: JobNetwork | null;
  report(verification?: VerificationResult[]): string;
}

/** A build's cost cap, the price it is counted at, and what the same job spent of it before the build. */
export interface CostBudget {
  dollars: number;
  price: ModelPrice;
  /** Spent before the build, in the same job (a follow-up's diagnosis), and by what. */
  earlier: { dollars: number; by: string } | null;
}

/** What the same job spent before its build (a follow-up's diagnosis): it counts against the build's cost cap. */
export interface EarlierSpending {
  usage: TokenUsage;
  /** What spent it, as the cost cap's messages name it ("the diagnosis"). */
  by: string;
}

export function openBuildLedger(
  deps: WorkflowDeps,
  config: RepoConfig,
  build: { plan: Plan; state: ThreadState; notes: string[]; earlier?: EarlierSpending | undefined },
): BuildLedger {
  const pricing = pricingFor(deps, config, deps.modelFor(config).model);
  const ledger: BuildLedger = {
    usage: { prompt: 0, completion: 0, cached: 0, requests: 0 },
    audit: [],
    maxWallTimeMs: limitsFor(deps.limits, config).maxWallTimeMs,
    pricing,
    budget: costBudget(deps, config, pricing, build),
    network: null,
    report: (verification = []) =>
      renderBuildReport({
        plan: build.plan,
        state: build.state,
        verification,
        audit: ledger.audit,
        usage: ledger.usage,
        pricing,
        notes: [...build.notes, ...networkReportLines(ledger.network)],
      }),
  };
  return ledger;
}

/**
 * The build's cost cap with the price it is counted at, or null. A cap without a price cannot be
 * enforced: the report says so (and the log), rather than ignoring it silently.
 */
function costBudget(
  deps: WorkflowDeps,
  config: RepoConfig,
  pricing: Pricing,
  build: { notes: string[]; earlier?: EarlierSpending | undefined },
): CostBudget | null {
  const { notes, earlier } = build;
  const cap = costCapFor(deps, config, pricing.model);
  if (cap === undefined) return null;
  const dollars = cap.dollars;
  if (cap.note) notes.push(cap.note);
  if (cap.price && cap.price !== pricing.price)
    notes.push(
      `ℹ️ The cost cap of ${formatDollars(dollars)} is counted at the App's dearest prices: the App has no price for \`${pricing.model}\`.`,
    );
  if (cap.price) {
    const spent = earlier ? { dollars: costOf(earlier.usage, cap.price), by: earlier.by } : null;
    return { dollars, price: cap.price, earlier: spent && spent.dollars > 0 ? spent : null };
  }
  notes.push(
    `⚠️ The cost cap of ${formatDollars(dollars)} per build cannot be enforced: no price is configured for \`${pricing.model}\` (\`prices:\` in \`.github/blueprint.yml\`, or the App's BLUEPRINT_PRICES). Only the token and time limits hold this build.`,
  );
  deps.log.warn(
    { model: pricing.model, maxCost: dollars },
    "a cost cap is set but the model has no price, so it cannot be enforced",
  );
  return null;
}

/** Dollars spent of the build's cost cap so far: by the build, and by what ran before it in the same job. */
export function spentOfCap(ledger: BuildLedger, budget: CostBudget): number {
  return (budget.earlier?.dollars ?? 0) + costOf(ledger.usage, budget.price);
}

/** Why a run stops at the cost cap: the build's own cap, or the rest of one it shares with what ran before it. */
export function costCapReason(budget: CostBudget): string {
  const cap = formatDollars(budget.dollars);
  return budget.earlier
    ? `the build reached its cost cap of ${cap}, which it shares with ${budget.earlier.by} (${formatDollars(budget.earlier.dollars)} of it)`
    : `the build reached its cost cap of ${cap}`;
}
