import type { ModelPrice, PriceTable, TokenUsage } from "../shared/model-usage.js";

/**
 * The price of `model`. The App's table (the operator's own prices) wins over the repository's, so a
 * repository cannot make its builds look cheaper than the App's cost cap counts them.
 */
export function priceFor(model: string, app: PriceTable, repo: PriceTable = {}): ModelPrice | null {
  return app[model] ?? repo[model] ?? null;
}

/** Dollars: (prompt − cached) · input + cached · cached_input + completion · output, per million tokens. */
export function costOf(usage: Pick<TokenUsage, "prompt" | "completion" | "cached">, price: ModelPrice): number {
  const cached = Math.min(usage.cached, usage.prompt);
  return (
    ((usage.prompt - cached) * price.input +
      cached * (price.cached_input ?? price.input) +
      usage.completion * price.output) /
    1_000_000
  );
}

/** "$0.0042", "$1.27", "$130": enough digits to tell small runs apart. */
export function formatDollars(amount: number): string {
  if (amount === 0) return "$0";
  if (amount < 0.0001) return "<$0.0001";
  if (amount < 0.01) return `$${amount.toPrecision(2)}`;
  if (amount < 100) return `$${amount.toFixed(2)}`;
  return `$${Math.round(amount).toLocaleString("en-US")}`;
}
