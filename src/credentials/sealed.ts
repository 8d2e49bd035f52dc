import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import { ConfigError, type BlueprintEnv } from "../config/env.js";

/**
 * What intake and workers share to trust what crosses Redis, from the one secret they hold
 * (BLUEPRINT_STATE_SECRET): authenticated encryption (AES-256-GCM) for what Redis must not read (a
 * job's installation token), and a signature (HMAC-SHA256) on what Redis must not change (the job).
 * Each purpose has its own key, derived with HKDF under its own name.
 */
export class Sealer {
  private readonly sealKey: Buffer;
  private readonly signKey: Buffer;

  constructor(secret: string) {
    this.sealKey = Buffer.from(hkdfSync("sha256", secret, "blueprint", "job token v1", 32));
    this.signKey = Buffer.from(hkdfSync("sha256", secret, "blueprint", "job signature v1", 32));
  }

  /** `associated`: what the sealed text is bound to (opened with anything else, it throws). */
  seal(plain: string, associated: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.sealKey, iv);
    cipher.setAAD(Buffer.from(associated, "utf8"));
    const sealed = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString("base64url");
  }

  /** Throws when the data was not sealed with this secret and `associated`, or was changed. */
  open(sealed: string, associated: string): string {
    const raw = Buffer.from(sealed, "base64url");
    const decipher = createDecipheriv("aes-256-gcm", this.sealKey, raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(associated, "utf8"));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
  }

  /**
   * The signature of `value`'s canonical JSON (object keys sorted), so equal data signs alike wherever it was
   * serialised.
   */
  sign(value: unknown): string {
    return createHmac("sha256", this.signKey).update(canonicalJson(value)).digest("base64url");
  }

  verify(value: unknown, signature: string): boolean {
    const expected = Buffer.from(this.sign(value), "base64url");
    const given = Buffer.from(signature, "base64url");
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}

/**
 * The secret intake and workers share to sign jobs and seal their tokens; required with Redis (workers hold no App key
 * to fall back on).
 */
export function jobSealer(env: BlueprintEnv): Sealer {
  if (!env.BLUEPRINT_STATE_SECRET) {
    throw new ConfigError(
      "REDIS_URL is set, so jobs cross processes: set BLUEPRINT_STATE_SECRET (16+ characters, the same on every intake and worker) so jobs travel signed, and their tokens sealed, through Redis",
    );
  }
  return new Sealer(env.BLUEPRINT_STATE_SECRET);
}

/** JSON with every object's keys in order, and `undefined` members left out (as JSON.stringify and Redis do). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, member: unknown) =>
    member !== null && typeof member === "object" && !Array.isArray(member)
      ? Object.fromEntries(
          Object.entries(member as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : member,
  );
}
