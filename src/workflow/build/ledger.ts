import { formatDollars } from "../../agent/cost.js";
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
  budget: { dollars: number; price: ModelPrice } | null;
  /** One network for all the build's commands, once it is open. */
  network: JobNetwork | null;
  report(verification?: VerificationResult[]): string;
}

export function openBuildLedger(
  deps: WorkflowDeps,
  config: RepoConfig,
  build: { plan: Plan; state: ThreadState; notes: string[] },
): BuildLedger {
  const pricing = pricingFor(deps, config, deps.modelFor(config).model);
  const ledger: BuildLedger = {
    usage: { prompt: 0, completion: 0, cached: 0, requests: 0 },
    audit: [],
    maxWallTimeMs: limitsFor(deps.limits, config).maxWallTimeMs,
    pricing,
    budget: costBudget(deps, config, pricing, build.notes),
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
  notes: string[],
): { dollars: number; price: ModelPrice } | null {
  const cap = costCapFor(deps, config, pricing.model);
  if (cap === undefined) return null;
  const dollars = cap.dollars;
  if (cap.note) notes.push(cap.note);
  if (cap.price && cap.price !== pricing.price)
    notes.push(
      `ℹ️ The cost cap of ${formatDollars(dollars)} is counted at the App's dearest prices: the App has no price for \`${pricing.model}\`.`,
    );
  if (cap.price) return { dollars, price: cap.price };
  notes.push(
    `⚠️ The cost cap of ${formatDollars(dollars)} per build cannot be enforced: no price is configured for \`${pricing.model}\` (\`prices:\` in \`.github/blueprint.yml\`, or the App's BLUEPRINT_PRICES). Only the token and time limits hold this build.`,
  );
  deps.log.warn(
    { model: pricing.model, maxCost: dollars },
    "a cost cap is set but the model has no price, so it cannot be enforced",
  );
  return null;
}
