import { describe, expect, it } from "vitest";
import { Sealer } from "../../src/jobs/sealed.js";

describe("a job's token sealed for Redis", () => {
  const token = JSON.stringify({ token: "ghs_0123456789abcdefghijklmnopqrstuvwxyz", expiresAt: "2030-01-01T00:00:00Z", permissions: { issues: "write" } });

  it("opens with the shared secret, and the sealed text does not show the token", () => {
    const sealed = new Sealer("a-secret-shared-by-intake-and-workers").seal(token);
    expect(sealed).not.toContain("ghs_");
    expect(new Sealer("a-secret-shared-by-intake-and-workers").open(sealed)).toBe(token);
  });

  it("refuses another secret and any change to the sealed text", () => {
    const sealer = new Sealer("a-secret-shared-by-intake-and-workers");
    const sealed = sealer.seal(token);
    expect(() => new Sealer("another-secret-of-some-length").open(sealed)).toThrow();
    const flipped = Buffer.from(sealed, "base64url");
    flipped[flipped.length - 1] = (flipped[flipped.length - 1] ?? 0) ^ 1;
    expect(() => sealer.open(flipped.toString("base64url"))).toThrow();
  });
});
