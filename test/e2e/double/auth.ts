import { createPublicKey, randomBytes, verify, type KeyObject } from "node:crypto";

/** What a minted token says of its expiry, and how long the double honours it. */
export interface TokenLifetime {
  declaredMs: number;
  validMs: number;
}

/**
 * GitHub App authentication as GitHub checks it: an RS256 JWT signed with the App's private
 * key opens `/app/...`; the installation tokens it mints open everything else, REST and git.
 */
export class AppAuthority {
  private readonly publicKey: KeyObject;
  private readonly tokens = new Map<
    string,
    { installationId: number; expiresAt: number; permissions: Record<string, string> | null }
  >();

  constructor(
    readonly appId: number,
    appPublicKey: string | KeyObject,
  ) {
    this.publicKey = typeof appPublicKey === "string" ? createPublicKey(appPublicKey) : appPublicKey;
  }

  /** Checks `Authorization: Bearer <jwt>`; returns why it is refused, or null when it is good. */
  jwtProblem(authorization: string | undefined): string | null {
    const jwt = /^bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1];
    if (!jwt) return "no bearer JWT";
    const [header = "", payload = "", signature = ""] = jwt.split(".");
    let claims: { iss?: unknown; iat?: unknown; exp?: unknown };
    try {
      if ((JSON.parse(Buffer.from(header, "base64url").toString()) as { alg?: string }).alg !== "RS256")
        return "the JWT is not RS256";
      claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as typeof claims;
    } catch {
      return "the JWT is malformed";
    }
    if (!verify("sha256", Buffer.from(`${header}.${payload}`), this.publicKey, Buffer.from(signature, "base64url")))
      return "the JWT signature does not verify with the App's public key";
    if (String(claims.iss) !== String(this.appId)) return `the JWT is for app ${String(claims.iss)}, not ${this.appId}`;
    const now = Math.floor(Date.now() / 1000);
    if (typeof claims.exp !== "number" || claims.exp <= now) return "the JWT has expired";
    if (typeof claims.iat !== "number" || claims.iat > now + 60) return "the JWT is issued in the future";
    if (claims.exp - claims.iat > 11 * 60) return "the JWT lives longer than 10 minutes";
    return null;
  }

  /** How long the tokens minted from now on live: an hour, as on GitHub, unless a test shortens it. */
  tokenLifetimeMs = 3600_000;
  /**
   * Lifetimes for the next tokens minted, in order, before `tokenLifetimeMs` applies again. A pair is
   * time run fast: the token says it expires at `declaredMs` but is refused after `validMs` (a test
   * cannot wait the ten minutes between "expires soon" and "expired").
   */
  nextLifetimesMs: Array<number | TokenLifetime> = [];

  /** A fresh installation token, valid for `tokenLifetimeMs`. */
  issue(
    installationId: number,
    permissions: Record<string, string> | null = null,
  ): { token: string; expiresAt: string } {
    const token = `ghs_${randomBytes(27).toString("base64url").replace(/[-_]/g, "x").slice(0, 36)}`;
    const next = this.nextLifetimesMs.shift() ?? this.tokenLifetimeMs;
    const { declaredMs, validMs } = typeof next === "number" ? { declaredMs: next, validMs: next } : next;
    const now = Date.now();
    this.tokens.set(token, { installationId, expiresAt: now + validMs, permissions });
    return { token, expiresAt: new Date(now + declaredMs).toISOString().replace(/\.\d{3}Z$/, "Z") };
  }

  isValidToken(token: string | undefined): boolean {
    const grant = token ? this.tokens.get(token) : undefined;
    return grant !== undefined && grant.expiresAt > Date.now();
  }

  /** The installation a valid token was minted for; null for a missing, unknown or expired token. */
  installationOf(token: string | undefined): number | null {
    const grant = token ? this.tokens.get(token) : undefined;
    return grant !== undefined && grant.expiresAt > Date.now() ? grant.installationId : null;
  }

  /** The installation behind `Authorization: token <t>` (REST, GraphQL) or `Basic base64(x-access-token:<t>)` (git). */
  installationOfHeader(authorization: string | undefined): number | null {
    const rest = /^(?:token|bearer)\s+(\S+)$/i.exec(authorization ?? "")?.[1];
    if (rest) return this.installationOf(rest);
    const encoded = /^basic\s+(\S+)$/i.exec(authorization ?? "")?.[1];
    if (!encoded) return null;
    const decoded = Buffer.from(encoded, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    return colon >= 0 && decoded.slice(0, colon) === "x-access-token"
      ? this.installationOf(decoded.slice(colon + 1))
      : null;
  }

  /**
   * What the token behind `Authorization: token <t>` was granted; null when it was minted without a list (everything
   * the installation has).
   */
  permissionsOfHeader(authorization: string | undefined): Record<string, string> | null {
    const token = /^(?:token|bearer)\s+(\S+)$/i.exec(authorization ?? "")?.[1];
    return (token ? this.tokens.get(token)?.permissions : null) ?? null;
  }

  /** `Authorization: token <t>` (or `Bearer <t>`) on REST and GraphQL. */
  restTokenOk(authorization: string | undefined): boolean {
    return this.isValidToken(/^(?:token|bearer)\s+(\S+)$/i.exec(authorization ?? "")?.[1]);
  }

  /** `Authorization: Basic base64(x-access-token:<t>)` on git's smart HTTP. */
  gitTokenOk(authorization: string | undefined): boolean {
    const encoded = /^basic\s+(\S+)$/i.exec(authorization ?? "")?.[1];
    if (!encoded) return false;
    const decoded = Buffer.from(encoded, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    return colon >= 0 && decoded.slice(0, colon) === "x-access-token" && this.isValidToken(decoded.slice(colon + 1));
  }

  /** Every token minted so far (to check none of them leaked). */
  issuedTokens(): string[] {
    return [...this.tokens.keys()];
  }

  /** Refuses `token` from now on, as GitHub does once it has expired. */
  expire(token: string): void {
    const grant = this.tokens.get(token);
    if (grant) grant.expiresAt = 0;
  }
}
