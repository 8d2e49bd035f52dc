/**
 * The model's bill in words every side may use: tokens spent (the engine counts them, the report and
 * the plan comment print them) and the prices per model (configuration reads them, the engine and the
 * build's cost cap apply them). Here, below both, so no adapter or configuration imports the engine.
 */

import { z } from "zod";

export interface TokenUsage {
  prompt: number;
  completion: number;
  cached: number;
  requests: number;
}

/**
 * What a model's tokens cost, in dollars per million tokens. `cached_input` is the price of prompt
 * tokens the endpoint served from its cache; without it they cost as much as other input.
 */
export const modelPriceSchema = z
  .object({
    input: z.number().nonnegative().describe("Dollars per million prompt tokens (not cached)."),
    cached_input: z
      .number()
      .nonnegative()
      .optional()
      .describe("Dollars per million cached prompt tokens; the input price when absent."),
    output: z.number().nonnegative().describe("Dollars per million completion tokens."),
  })
  .strict();

/** Prices per model name, as the endpoint is asked for it (`model:` / `BLUEPRINT_MODEL`), matched exactly. */
export const priceTableSchema = z.record(z.string().min(1), modelPriceSchema);

export type ModelPrice = z.output<typeof modelPriceSchema>;
export type PriceTable = z.output<typeof priceTableSchema>;
