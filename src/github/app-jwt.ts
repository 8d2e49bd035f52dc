// Ablation 2026-11-28 (npm run bench ablate, load 5–16): 100 first tokens in a burst 329–681 ms vs auth-app 1.1–2.1 s.
import { createPrivateKey, createSign, type KeyObject } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "../workflow/deps.js";
import { keepAliveFetch, type LightResponse } from "./keep-alive-fetch.js";
import { Slots } from "../shared/slots.js";
import { Turns } from "../jobs/turns.js";
import { backoffWait, rateLimitWait } from "./pacing.js";

/** The one App call minting a job's token makes (with the App's JWT): what `credentials/` needs of GitHub to mint. */
export interface TokenMinter {
  rest: {
    apps: {
      createInstallationAccessToken(request: {
        installation_id: number;
        repositories: string[];
        permissions?: Record<string, "read" | "write">;
      }): Promise<{ data: { token: string; expires_at: string; permissions?: Record<string, string | undefined> } }>;
    };
  };
}

/** GitHub accepts an App's token for at most 10 minutes; one is reused for 5 and signed to last 9. */
const REUSE_MS = 5 * 60_000;
const LIFETIME_S = 9 * 60;
/** Issued a minute early, for clock drift (as GitHub advises). */
const DRIFT_S = 60;

const base64url = (text: string) => Buffer.from(text).toString("base64url");

/**
 * The App's JSON Web Token (RS256), signed with a key parsed once and reused for minutes: minting a
 * job's token costs one HTTP request, not a key import and a signature (about 3 ms of intake CPU each).
 */
export class AppJwt {
  private readonly key: KeyObject;
  private cached: { token: string; until: number } | null = null;

  constructor(
    private readonly appId: number,
    privateKey: string,
  ) {
    this.key = createPrivateKey(privateKey);
  }

  token(now = Date.now()): string {
    if (this.cached && now < this.cached.until) return this.cached.token;
    const iat = Math.floor(now / 1000) - DRIFT_S;
    const header = base64url(JSON.stringify({ alg: "RS256", typ: "JWT" }));
    const payload = base64url(JSON.stringify({ iat, exp: iat + LIFETIME_S, iss: this.appId }));
    const signature = createSign("RSA-SHA256").update(`${header}.${payload}`).sign(this.key, "base64url");
    this.cached = { token: `${header}.${payload}.${signature}`, until: now + REUSE_MS };
    return this.cached.token;
  }
}

/** Retries of a token request that failed on GitHub's side (5xx, the network) or hit a rate limit. */
const RETRIES = 3;
/** One token request's longest wait for GitHub's answer. */
const REQUEST_TIMEOUT_MS = 30_000;
/**
 * Token requests in flight at once, all installations together (one installation's are also one at a
 * time): under GitHub's 100 concurrent requests, and above a burst's first wave (every installation's
 * first token at once, which a cap of 10 held back by some 300 ms).
 */
const AT_ONCE = 50;
/** A rate limit asking for a longer wait than this fails the mint instead (the webhook's redelivery starts the job). */
const LONGEST_WAIT_S = 60;

/**
 * Job-token minters from the App's own credentials: each token request is one `fetch`, signed with
 * the shared, reused App token. Not an Octokit: constructing one per installation and its plugins'
 * timer turns cost more than the request itself, on the intake's thread, whose speed decides every
 * installation's first 👀. Server errors and rate limits are retried a few times.
 */
export function appTokenMinter(options: {
  appId: number;
  privateKey: string;
  baseUrl: string;
  log: Logger;
  secondMs?: number;
}): (installationId: number) => Promise<TokenMinter> {
  const jwt = new AppJwt(options.appId, options.privateKey);
  // Signed now, at start-up, rather than when the first webhook's job waits for its token.
  jwt.token();
  const turns = new Turns(REQUEST_TIMEOUT_MS * (RETRIES + 1));
  const context: MintContext = {
    jwt,
    base: options.baseUrl.replace(/\/$/, ""),
    // Node's own fetch loads and starts its client on the first token request, which is always the urgent one.
    fetch: keepAliveFetch({ maxSockets: AT_ONCE }),
    second: options.secondMs ?? 1_000,
    log: options.log,
  };
  const slots = new Slots(AT_ONCE);
  // As plugin-throttling paced them (one at a time per installation), and under GitHub's concurrency limit overall.
  const createInstallationAccessToken: CreateToken = async (request) => {
    const turn = await turns.take(request.installation_id);
    try {
      return await slots.run(() => requestToken(context, request));
    } finally {
      turn.end();
    }
  };
  const minter: TokenMinter = { rest: { apps: { createInstallationAccessToken } } };
  return async () => minter;
}

type CreateToken = TokenMinter["rest"]["apps"]["createInstallationAccessToken"];

/** What every token request of one minter shares: the App's token, GitHub's address, the connection pool. */
interface MintContext {
  jwt: AppJwt;
  base: string;
  fetch: ReturnType<typeof keepAliveFetch>;
  /** Milliseconds in a second of waiting (shorter in tests). */
  second: number;
  log: Logger;
}

/** GitHub's answer to a token request, as far as it is read. */
type TokenResponseBody = {
  token?: unknown;
  expires_at?: unknown;
  permissions?: Record<string, string | undefined>;
  message?: unknown;
} | null;

/** One installation's token, requested (and retried) until GitHub gives it or refuses for good. */
async function requestToken(
  context: MintContext,
  { installation_id, ...body }: Parameters<CreateToken>[0],
): ReturnType<CreateToken> {
  const url = `${context.base}/app/installations/${installation_id}/access_tokens`;
  for (let attempt = 0; ; attempt++) {
    let response: LightResponse;
    try {
      response = await postTokenRequest(context, url, body);
    } catch (error) {
      // The network failed: retried as a server error would be.
      const backoff = backoffWait(500, attempt, RETRIES);
      if (backoff === null)
        throw Object.assign(
          new Error(`requesting a token for installation ${installation_id} failed: ${(error as Error).message}`),
          { status: 500 },
        );
      await sleep(backoff * context.second);
      continue;
    }
    const text = await response.text();
    const data = parseJson(text) as TokenResponseBody;
    const minted = mintedToken(response.status, data);
    if (minted) return minted;
    const message = typeof data?.message === "string" ? data.message : text.slice(0, 200);
    const wait = retryWait(response, message, attempt);
    if (wait !== null) {
      context.log.warn(
        { status: response.status, installationId: installation_id, retryAfter: wait },
        "a token request was refused for now; trying again",
      );
      await sleep(wait * context.second);
      continue;
    }
    throw Object.assign(
      new Error(`GitHub refused a token for installation ${installation_id} (${response.status}): ${message}`),
      { status: response.status },
    );
  }
}

/** One POST for an installation's token, signed with the App's (reused) token. */
function postTokenRequest(context: MintContext, url: string, body: object): Promise<LightResponse> {
  return context.fetch(url, {
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    method: "POST",
    headers: {
      authorization: `bearer ${context.jwt.token()}`,
      accept: "application/vnd.github+json",
      "content-type": "application/json",
      "user-agent": "blueprint",
      "x-github-api-version": "2022-11-28",
    },
    body: JSON.stringify(body),
  });
}

/** The token GitHub gave, when its answer is a complete one; otherwise null. */
function mintedToken(status: number, data: TokenResponseBody): Awaited<ReturnType<CreateToken>> | null {
  if (status === 201 && typeof data?.token === "string" && data.token !== "" && typeof data.expires_at === "string") {
    return {
      data: {
        token: data.token,
        expires_at: data.expires_at,
        ...(data.permissions ? { permissions: data.permissions } : {}),
      },
    };
  }
  return null;
}

/** Seconds to wait before trying a refused request again, or null when it is not to be retried. */
function retryWait(response: LightResponse, message: string, attempt: number): number | null {
  const limit = rateLimitWait(response.status, message, (name) => response.headers.get(name));
  // A rate limit asking for more than a minute fails the mint (the webhook's redelivery starts the job).
  return limit
    ? limit.seconds <= LONGEST_WAIT_S && attempt < RETRIES
      ? limit.seconds
      : null
    : backoffWait(response.status, attempt, RETRIES);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
