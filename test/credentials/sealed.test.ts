import { describe, expect, it } from "vitest";
import { Sealer } from "../../src/credentials/index.js";

describe("a job's token sealed for Redis", () => {
  const token = JSON.stringify({
    token: "ghs_0123456789abcdefghijklmnopqrstuvwxyz",
    expiresAt: "2030-01-01T00:00:00Z",
    permissions: { issues: "write" },
  });
  const job = '["d-1","octo/repo","build"]';

  it("opens with the shared secret, and the sealed text does not show the token", () => {
    const sealed = new Sealer("a-secret-shared-by-intake-and-workers").seal(token, job);
    expect(sealed).not.toContain("ghs_");
    expect(new Sealer("a-secret-shared-by-intake-and-workers").open(sealed, job)).toBe(token);
  });

  it("refuses another secret, any change to the sealed text, and any other job it is opened for", () => {
    const sealer = new Sealer("a-secret-shared-by-intake-and-workers");
    const sealed = sealer.seal(token, job);
    expect(() => new Sealer("another-secret-of-some-length").open(sealed, job)).toThrow();
    const flipped = Buffer.from(sealed, "base64url");
    flipped[flipped.length - 1] = (flipped[flipped.length - 1] ?? 0) ^ 1;
    expect(() => sealer.open(flipped.toString("base64url"), job)).toThrow();
    expect(() => sealer.open(sealed, '["d-2","octo/repo","build"]')).toThrow();
  });
});

describe("a job signed for Redis", () => {
  const sealer = new Sealer("a-secret-shared-by-intake-and-workers");

  it("verifies the same data however its keys were ordered, and nothing else", () => {
    const signature = sealer.sign({ queue: "q", job: { b: 1, a: [1, { y: 2, x: 1 }] } });
    expect(sealer.verify({ job: { a: [1, { x: 1, y: 2 }], b: 1 }, queue: "q" }, signature)).toBe(true);
    expect(sealer.verify({ queue: "q", job: { b: 2, a: [1, { y: 2, x: 1 }] } }, signature)).toBe(false);
    expect(sealer.verify({ queue: "q", job: { b: 1, a: [{ y: 2, x: 1 }, 1] } }, signature)).toBe(false);
    expect(sealer.verify({ queue: "q", job: { b: 1, a: [1, { y: 2, x: 1 }] } }, "")).toBe(false);
  });

  it("does not verify what another secret signed", () => {
    const data = { queue: "q", job: { a: 1 } };
    expect(new Sealer("another-secret-of-some-length").verify(data, sealer.sign(data))).toBe(false);
  });
});
