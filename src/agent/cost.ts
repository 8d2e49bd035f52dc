import { z } from "zod";
import type { TokenUsage } from "./model.js";

/**
 * What a model's tokens cost, in dollars per million tokens. `cached_input` is the price of prompt
 * tokens the endpoint served from its cache; without it they cost as much as other input.
 */
export const modelPriceSchema = z
  .object({
    input: z.number().nonnegative().describe("Dollars per million prompt tokens (not cached)."),
    cached_input: z.number().nonnegative().optional().describe("Dollars per million cached prompt tokens; the input price when absent."),
    output: z.number().nonnegative().describe("Dollars per million completion tokens."),
  })
  .strict();

/** Prices per model name, as the endpoint is asked for it (`model:` / `BLUEPRINT_MODEL`), matched exactly. */
export const priceTableSchema = z.record(z.string().min(1), modelPriceSchema);

export type ModelPrice = z.output<typeof modelPriceSchema>;
export type PriceTable = z.output<typeof priceTableSchema>;

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
  return ((usage.prompt - cached) * price.input + cached * (price.cached_input ?? price.input) + usage.completion * price.output) / 1_000_000;
}

/** "$0.0042", "$1.27", "$130": enough digits to tell small runs apart. */
export function formatDollars(amount: number): string {
  if (amount === 0) return "$0";
  if (amount < 0.0001) return "<$0.0001";
  if (amount < 0.01) return `$${amount.toPrecision(2)}`;
  if (amount < 100) return `$${amount.toFixed(2)}`;
  return `$${Math.round(amount).toLocaleString("en-US")}`;
}
