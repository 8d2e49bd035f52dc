import { describe, expect, it } from "vitest";
import { ConfigError, loadEnv } from "../../src/config/env.js";
import { formatEgressEntry, REGISTRY_HOSTS } from "../../src/workspace/egress-policy.js";

describe("BLUEPRINT_NETWORK_ALLOW", () => {
  it("defaults to the built-in registries (empty counts as unset)", () => {
    const expected = REGISTRY_HOSTS.map((host) => `${host}:443`);
    expect(loadEnv({}).BLUEPRINT_NETWORK_ALLOW.map(formatEgressEntry)).toEqual(expected);
    expect(loadEnv({ BLUEPRINT_NETWORK_ALLOW: "" }).BLUEPRINT_NETWORK_ALLOW.map(formatEgressEntry)).toEqual(expected);
  });

  it("reads the operator's entries, `registries` and `none`", () => {
    expect(loadEnv({ BLUEPRINT_NETWORK_ALLOW: "none" }).BLUEPRINT_NETWORK_ALLOW).toEqual([]);
    expect(
      loadEnv({
        BLUEPRINT_NETWORK_ALLOW: "github.com:443, *.internal.example, [fd00::5]:4873",
      }).BLUEPRINT_NETWORK_ALLOW.map(formatEgressEntry),
    ).toEqual(["github.com:443", "*.internal.example", "[fd00::5]:4873"]);
  });

  it("refuses a bad entry at start, naming the variable and the entry", () => {
    expect(() => loadEnv({ BLUEPRINT_NETWORK_ALLOW: "registries, 10.0.0.5" })).toThrow(ConfigError);
    expect(() => loadEnv({ BLUEPRINT_NETWORK_ALLOW: "registries, 10.0.0.5" })).toThrow(
      /BLUEPRINT_NETWORK_ALLOW: `10\.0\.0\.5` is an address without a port/,
    );
  });
});
