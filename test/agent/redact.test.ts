import { describe, expect, it } from "vitest";
import { createRedactor } from "../../src/agent/redact.js";

describe("createRedactor", () => {
  it("removes known secret values wherever they appear", () => {
    const redact = createRedactor(["s3cr3t-value-123", undefined, null]);
    expect(redact("key=s3cr3t-value-123 and again s3cr3t-value-123.")).toBe("key=[redacted] and again [redacted].");
  });

  it("treats secrets literally, not as regular expressions", () => {
    const secret = "a.b*c+d(e)$f";
    const redact = createRedactor([secret]);
    expect(redact(`x ${secret} y`)).toBe("x [redacted] y");
    expect(redact("x aXbbbcd(e)$f y")).toBe("x aXbbbcd(e)$f y");
  });

  it("removes the longer secret first when one contains another", () => {
    const redact = createRedactor(["abcdefgh", "abcdefgh-ijklmnop"]);
    expect(redact("token abcdefgh-ijklmnop")).toBe("token [redacted]");
  });

  it("ignores very short known values that would shred normal text", () => {
    const redact = createRedactor(["abc", ""]);
    expect(redact("abc abc")).toBe("abc abc");
  });

  it.each([
    ["GitHub installation token", `ghs_${"A1b2".repeat(9)}`],
    ["GitHub personal token", `ghp_${"Z9y8".repeat(9)}`],
    ["fine-grained PAT", `github_pat_11ABCDEFG0_${"x".repeat(40)}`],
    ["OpenAI key", `sk-proj-${"k".repeat(40)}`],
    ["Anthropic-style key", `sk-ant-${"q".repeat(40)}`],
    ["AWS access key", "AKIAIOSFODNN7EXAMPLE"],
  ])("removes a %s without knowing it", (_name, token) => {
    const redact = createRedactor([]);
    const out = redact(`before ${token} after`);
    expect(out).toBe("before [redacted] after");
  });

  it("removes a token embedded in a clone URL", () => {
    const redact = createRedactor([]);
    const out = redact("fatal: unable to access 'https://x-access-token:v1.abcdef0123456789@github.example/o/r.git/'");
    expect(out).not.toContain("v1.abcdef0123456789");
    expect(out).toContain("github.example/o/r.git");
  });

  it("removes a whole private key block", () => {
    const key = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nline2\n-----END RSA PRIVATE KEY-----";
    const out = createRedactor([])(`key:\n${key}\ndone`);
    expect(out).toBe("key:\n[redacted]\ndone");
  });

  it("removes a key cut off before its END line (truncated output), and the keys around it", () => {
    const redact = createRedactor([]);
    expect(
      redact("a\n-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nMIIEowIBAAKC\nQQ==\n\n[output truncated]"),
    ).toBe("a\n[redacted]\n\n[output truncated]");
    expect(
      redact(
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG\n-----BEGIN PRIVATE KEY-----\nMIIEowIBAAKCAQEA\nQQ==\nend",
      ),
    ).toBe("[redacted]\n[redacted]\nend");
    expect(
      redact(
        "x -----BEGIN PRIVATE KEY----- y\n-----END PRIVATE KEY----- z -----BEGIN EC PRIVATE KEY-----\nk\n-----END EC PRIVATE KEY-----!",
      ),
    ).toBe("x [redacted] z [redacted]!");
  });

  it("stays linear on repeated BEGIN lines without an END (quadratic before: 40 s for 50,000 lines)", () => {
    // Twice the lines that took 40 s: a quadratic redactor runs into the test's time limit (no timed assertion).
    expect(createRedactor([])("-----BEGIN PRIVATE KEY-----\n".repeat(100_000))).toBe("[redacted]\n".repeat(100_000));
  });

  it("leaves ordinary text alone and is repeatable", () => {
    const redact = createRedactor(["super-secret-1"]);
    const text = "Ran npm test: 42 passed (sk-short, ghp_tooShort, task-1234)";
    expect(redact(text)).toBe(text);
    const secretText = `x ghp_${"a".repeat(36)} y`;
    expect(redact(secretText)).toBe("x [redacted] y");
    expect(redact(secretText)).toBe("x [redacted] y"); // global regexes keep no state between calls
  });
});
