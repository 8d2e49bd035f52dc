import { describe, expect, it } from "vitest";
import { ConfigError, loadEnv } from "../../src/config/env.js";

describe("the App's prices and cost cap from the environment", () => {
  it("reads BLUEPRINT_PRICES as JSON and BLUEPRINT_MAX_COST as dollars", () => {
    const env = loadEnv({
      BLUEPRINT_PRICES: '{"gpt-4.1": {"input": 2, "cached_input": 0.5, "output": 8}}',
      BLUEPRINT_MAX_COST: "1.5",
    });
    expect(env.BLUEPRINT_PRICES).toEqual({ "gpt-4.1": { input: 2, cached_input: 0.5, output: 8 } });
    expect(env.BLUEPRINT_MAX_COST).toBe(1.5);
  });

  it("has no prices and no cap unless set", () => {
    const env = loadEnv({});
    expect(env.BLUEPRINT_PRICES).toEqual({});
    expect(env.BLUEPRINT_MAX_COST).toBeUndefined();
  });

  it("refuses prices that are not JSON or lack a field, and a cap that is not a positive number, naming the variable", () => {
    expect(() => loadEnv({ BLUEPRINT_PRICES: "gpt-4.1: 2" })).toThrow(/BLUEPRINT_PRICES: is not valid JSON/);
    expect(() => loadEnv({ BLUEPRINT_PRICES: '{"gpt-4.1": {"input": 2}}' })).toThrow(ConfigError);
    expect(() => loadEnv({ BLUEPRINT_PRICES: '{"gpt-4.1": {"input": 2}}' })).toThrow(/BLUEPRINT_PRICES/);
    expect(() => loadEnv({ BLUEPRINT_MAX_COST: "0" })).toThrow(/BLUEPRINT_MAX_COST/);
    expect(() => loadEnv({ BLUEPRINT_MAX_COST: "a lot" })).toThrow(/BLUEPRINT_MAX_COST/);
  });
});
