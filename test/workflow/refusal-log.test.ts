import { describe, expect, it } from "vitest";
import { refusalLog } from "../../src/workflow/build/network.js";

/** A command trying endless unique names grows neither the App's memory nor its log (issue #40, point 2). */
describe("the build network's refusal log", () => {
  it("logs the first 30 hosts by name once each, then one summary line a minute at most", () => {
    const lines: string[] = [];
    const log = {
      info: (_: object, message: string) => lines.push(message),
      warn: () => undefined,
      error: () => undefined,
    };
    let now = 0;
    const refused = refusalLog(log, () => now);
    for (let i = 0; i < 100_000; i++) refused({ host: `n${i}.example`, port: 443, reason: "not allowed" });
    refused({ host: "n1.example", port: 443, reason: "not allowed" });
    expect(lines.filter((line) => line.startsWith("network: refused n"))).toHaveLength(30);
    expect(lines.slice(30)).toEqual([
      "network: refused connections to 1 more hosts beyond the first 30 (not logged one by one)",
    ]);
    now = 60_000;
    refused({ host: "late.example", port: 443, reason: "not allowed" });
    expect(lines).toHaveLength(32);
    expect(lines[31]).toBe(
      "network: refused connections to 99971 more hosts beyond the first 30 (not logged one by one)",
    );
  });
});
